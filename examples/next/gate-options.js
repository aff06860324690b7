// Gate options for this example, from the environment. GATE_SIDECAR_URL is read by Gate itself; the
// rest are this app's own choices (a real app would usually write them inline).
const env = process.env

export const gateOptions = {
  skip: ['/healthz', '/edge/healthz'],
  ...(env.GATE_SIDECAR_PUBLIC_KEY ? { sidecarPublicKey: env.GATE_SIDECAR_PUBLIC_KEY } : {}),
  ...(env.GATE_ON_SIDECAR_ERROR ? { onSidecarError: env.GATE_ON_SIDECAR_ERROR } : {}),
  ...(env.GATE_TIMEOUT_MS ? { timeoutMs: Number(env.GATE_TIMEOUT_MS) } : {}),
  ...(env.GATE_MAX_BODY_BYTES ? { maxBodyBytes: Number(env.GATE_MAX_BODY_BYTES) } : {}),
  ...(env.GATE_IDENTITY_COOKIE ? { identityCookie: env.GATE_IDENTITY_COOKIE } : {}),
}
