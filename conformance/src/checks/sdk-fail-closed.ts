// spec 02, Errors (SDK-side error codes) and the Fail-closed rule: an SDK under test is pointed at the
// real sidecar (a genuine allow passes, a genuine deny answers 403) and at the suite's own loopback
// fakes: a closed port, a server that never answers, and sidecars that lie. Each must be refused with
// the spec's code; none may reach the app's handler.
import { validate } from '@gate/schemas'
import { defineCheck, fail, skip } from '../check.js'
import type { CheckContext } from '../context.js'
import { reserveClosedPort } from '../fakes/closed-port.js'
import { startLyingSidecar, type LieMode } from '../fakes/lying-sidecar.js'
import type { LoopbackServer } from '../fakes/loopback.js'
import { startSilentServer } from '../fakes/silent-server.js'
import { concretePath } from '../policy.js'
import type { SdkAnswer, SdkRequest, SdkUnderTestOptions } from '../sdk-under-test.js'

/** The SDK call timeout the checks configure (the timeout check waits this long once). */
const SDK_TIMEOUT_MS = 500

// The positive controls call the real sidecar, whose answer on a busy machine can take longer than the
// timeout the fault checks need to be short: a slow genuine answer must not read as a failed check.
const GENUINE_TIMEOUT_MS = 10_000

/** Runs one request through the SDK under test, bounded so a hanging SDK cannot stall the run. */
async function throughSdk(ctx: CheckContext, options: Partial<SdkUnderTestOptions> & { sidecarUrl: string }, request: SdkRequest): Promise<SdkAnswer> {
  const sdk = ctx.sdkUnderTest
  if (sdk === null) skip(ctx.sdkNote)
  const timeoutMs = options.timeoutMs ?? SDK_TIMEOUT_MS
  const deadlineMs = timeoutMs * 2 + 5000
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      sdk({ timeoutMs, sidecarPublicKey: null, ...options }, request),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the SDK under test did not answer within ${deadlineMs} ms`)), deadlineMs)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

const PROBE: SdkRequest = Object.freeze({
  method: 'POST',
  path: '/gate-conformance/sdk-probe',
  rawQuery: 'page=1',
  headers: { 'content-type': 'application/json', 'user-agent': 'gate-conformance' },
  body: '{"name":"probe"}',
})

/** Not let through, answered `status` with error body `code`. */
function expectRefused(answer: SdkAnswer, status: number, code: string, what: string): void {
  if (answer.reachedHandler) fail(`${what}: the request reached the app's handler (fail open); expected ${status} ${code}`)
  const error = (answer.body as { error?: unknown } | undefined)?.error
  if (answer.status !== status || error !== code) fail(`${what}: the client got ${answer.status} ${String(error ?? '(no error code)')}; expected ${status} ${code}`)
  const result = validate('gate.http.error_body.v1', answer.body)
  if (!result.ok) fail(`${what}: the error body does not validate against gate.http.error_body.v1: ${result.errors.slice(0, 3).join('; ')}`)
}

async function withServer<S extends LoopbackServer, T>(start: () => Promise<S>, use: (server: S) => Promise<T>): Promise<T> {
  const server = await start()
  try {
    return await use(server)
  } finally {
    await server.close()
  }
}

function lieCheck(id: string, mode: LieMode, status: number, code: string, description: string, required: boolean) {
  return defineCheck({
    id,
    description,
    specRef: '02 Errors (SDK-side error codes); Fail-closed rule',
    required,
    needs: ['sdk-under-test'],
    async run(ctx) {
      await withServer(
        () => startLyingSidecar(mode),
        async liar => {
          const answer = await throughSdk(ctx, { sidecarUrl: liar.url, sidecarPublicKey: liar.publicKey }, PROBE)
          if (liar.evaluations === 0) fail(`through a sidecar that lies (${mode}): the SDK never called POST /gate/evaluate (answered ${answer.status})`)
          expectRefused(answer, status, code, `through a sidecar that lies (${mode})`)
        },
      )
    },
  })
}

export const SDK_CHECKS = [
  defineCheck({
    id: 'sdk.genuine-allow-passes',
    description: "the SDK lets a request the sidecar allows (session-allow GET) reach the app's handler",
    specRef: '02 States (allow → forward); Fail-closed rule (a positive control)',
    required: true,
    needs: ['sdk-under-test'],
    async run(ctx) {
      const route = ctx.policy.routes.find(r => r.decision === 'SessionAllow' && r.method === 'GET' && !r.approvalRequired)
      const path = route === undefined ? ctx.unmatched() : concretePath(route.pattern)
      const answer = await throughSdk(ctx, { sidecarUrl: ctx.http.baseUrl, sidecarPublicKey: await ctx.kernelKey(), timeoutMs: GENUINE_TIMEOUT_MS }, { method: 'GET', path, rawQuery: '', headers: { accept: 'application/json' }, body: null })
      if (!answer.reachedHandler) fail(`GET ${path} through the SDK: not let through (${answer.status} ${JSON.stringify(answer.body ?? null).slice(0, 200)})`)
    },
  }),
  defineCheck({
    id: 'sdk.genuine-deny-403',
    description: 'the SDK answers a request the sidecar denies (unsafe route, no capability) with 403 gate_access_denied and the receipt id',
    specRef: '02 States (deny → refuse); Errors (structured error body); 01 Proxy error bodies',
    required: true,
    needs: ['sdk-under-test'],
    async run(ctx) {
      const route = ctx.policy.routes.find(r => r.decision === 'DenyByDefault' && !r.approvalRequired && r.sideEffects === undefined)
      const path = route === undefined ? ctx.unmatched() : concretePath(route.pattern)
      const method = route?.method ?? 'POST'
      const answer = await throughSdk(ctx, { sidecarUrl: ctx.http.baseUrl, sidecarPublicKey: await ctx.kernelKey(), timeoutMs: GENUINE_TIMEOUT_MS }, { ...PROBE, method, path })
      expectRefused(answer, 403, 'gate_access_denied', `${method} ${path} through the SDK`)
      const receiptId = (answer.body as { receipt_id?: unknown }).receipt_id
      if (typeof receiptId !== 'string' || !/^[0-9a-f]{64}$/.test(receiptId)) fail(`${method} ${path} through the SDK: the 403 body has no receipt_id (${JSON.stringify(receiptId ?? null)})`)
    },
  }),
  defineCheck({
    id: 'sdk.unreachable-503',
    description: 'an SDK pointed at a closed port denies with 503 gate_sidecar_unreachable (fail closed)',
    specRef: '02 Errors (gate_sidecar_unreachable); Fail-closed rule',
    required: true,
    needs: ['sdk-under-test'],
    async run(ctx) {
      const url = await reserveClosedPort()
      expectRefused(await throughSdk(ctx, { sidecarUrl: url }, PROBE), 503, 'gate_sidecar_unreachable', `through a closed port (${url})`)
    },
  }),
  defineCheck({
    id: 'sdk.timeout-504',
    description: `an SDK pointed at a server that never answers denies with 504 gate_timeout after its timeout (${SDK_TIMEOUT_MS} ms here)`,
    specRef: '02 Errors (gate_timeout); Limits (SDK sidecar call timeout); Fail-closed rule',
    required: true,
    needs: ['sdk-under-test'],
    async run(ctx) {
      await withServer(startSilentServer, async server => {
        expectRefused(await throughSdk(ctx, { sidecarUrl: server.url }, PROBE), 504, 'gate_timeout', 'through a sidecar that never answers')
      })
    },
  }),
  lieCheck('sdk.error-status-502', 'status-500', 502, 'gate_evaluation_failed', 'an SDK whose sidecar answers 500 denies with 502 gate_evaluation_failed', true),
  lieCheck('sdk.garbage-502', 'garbage', 502, 'gate_evaluation_failed', 'an SDK whose sidecar answers 200 with a body that is not JSON denies with 502 gate_evaluation_failed', true),
  lieCheck('sdk.schema-violation-502', 'schema-violation', 502, 'gate_evaluation_failed', 'an SDK whose sidecar answers an allow without a receipt denies with 502 gate_evaluation_failed', true),
  lieCheck('sdk.impostor-502', 'impostor', 502, 'gate_invalid_receipt', "an SDK whose sidecar signs with a key other than the sidecar's denies with 502 gate_invalid_receipt", true),
  lieCheck('sdk.tampered-receipt-502', 'tampered', 502, 'gate_invalid_receipt', 'an SDK given a deny receipt flipped to allow after signing denies with 502 gate_invalid_receipt', true),
  lieCheck('sdk.replayed-receipt-502', 'replayed', 502, 'gate_invalid_receipt', 'an SDK given a validly signed allow receipt of another request denies with 502 gate_invalid_receipt', false),
  lieCheck('sdk.verdict-mismatch-502', 'verdict-mismatch', 502, 'gate_invalid_receipt', 'an SDK whose sidecar answers allow with a receipt that says deny denies with 502 gate_invalid_receipt', false),
]

