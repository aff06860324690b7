// The "SDK under test" seam of the sdk.* checks: given a sidecar URL, perform one request through the
// SDK (as an app using it would receive it) and report what the client got. The suite points it at the
// real sidecar and at its own dead and lying loopback sidecars (spec 02, Fail-closed rule).

/** How the SDK under test must be configured for one request. */
export interface SdkUnderTestOptions {
  /** The sidecar the SDK must ask. */
  sidecarUrl: string
  /** The sidecar call timeout to configure (short: the timeout check uses a server that never answers). */
  timeoutMs: number
  /** The sidecar's signing key, for SDKs that pin it; null when unknown (then read it the SDK's way). */
  sidecarPublicKey: string | null
}

/** The app request the client sends through the SDK. */
export interface SdkRequest {
  method: string
  /** Path without the query string. */
  path: string
  /** Query string without `?` ('' when none). */
  rawQuery: string
  /** Lower-cased header names. */
  headers: Record<string, string>
  body: string | null
}

/** What the client received. */
export interface SdkAnswer {
  status: number
  /** The parsed JSON body, when there was one. */
  body?: unknown
  /** True when the request reached the app's own handler (Gate let it through). */
  reachedHandler: boolean
}

/** Performs `request` through the SDK configured with `options`; must settle within a few timeouts. */
export type SdkUnderTest = (options: SdkUnderTestOptions, request: SdkRequest) => Promise<SdkAnswer>

interface GateCoreLike {
  decide(input: { method: string; path: string; rawQuery: string; headers: Record<string, string>; body: Uint8Array | null }): Promise<
    { allowed: true } | { allowed: false; status: number; body: unknown }
  >
  close(): Promise<void>
}

/**
 * @gate/sdk's middleware core as an SDK under test, or the reason it is unavailable. Imported
 * dynamically: the core may be missing from an older or partial @gate/sdk.
 */
export async function loadGateSdkCore(): Promise<{ sdk: SdkUnderTest } | { missing: string }> {
  let createGateCore: unknown
  try {
    const name = '@gate/sdk'
    createGateCore = ((await import(name)) as Record<string, unknown>).createGateCore
  } catch (err) {
    return { missing: `@gate/sdk could not be loaded (${(err as Error).message})` }
  }
  if (typeof createGateCore !== 'function') return { missing: '@gate/sdk has no createGateCore (the middleware core is not built yet)' }
  const create = createGateCore as (options: Record<string, unknown>) => GateCoreLike
  const sdk: SdkUnderTest = async (options, request) => {
    const core = create({ sidecarUrl: options.sidecarUrl, timeoutMs: options.timeoutMs, sidecarPublicKey: options.sidecarPublicKey })
    try {
      const outcome = await core.decide({
        method: request.method,
        path: request.path,
        rawQuery: request.rawQuery,
        headers: request.headers,
        body: request.body === null ? null : new TextEncoder().encode(request.body),
      })
      if (outcome.allowed) return { status: 200, body: { handled: true }, reachedHandler: true }
      return { status: outcome.status, body: outcome.body, reachedHandler: false }
    } finally {
      await core.close()
    }
  }
  return { sdk }
}
