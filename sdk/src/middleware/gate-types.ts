// The neutral input and outcome of the middleware core. An adapter reads its framework's request into
// a GateRequestInput and writes the GateOutcome back; every decision happens in between (STYLE, Adapters).
import type { CallerIdentity, EvaluateResponse, GuardEvidence, HttpReceipt, SignedExecutionNonce, Verdict } from '../types.js'
import type { GateErrorBody } from '../types.js'

/** A Node readable request stream (IncomingMessage, Fastify's payload): read once, then replayed. */
export interface NodeBodyStream {
  read(): unknown
  unshift(chunk: Uint8Array): void
  on(event: string, listener: (...args: never[]) => void): unknown
  removeListener(event: string, listener: (...args: never[]) => void): unknown
  readonly readable: boolean
  readonly readableEnded: boolean
  /** IncomingMessage: true once the whole message has been parsed. */
  readonly complete?: boolean
}

/**
 * Where the request body comes from:
 * - `Uint8Array`: bytes a parser already captured (e.g. Express `verify` → `req.rawBody`);
 * - `string`: raw body text a parser kept (Koa's `ctx.request.rawBody`), hashed as its UTF-8 bytes;
 * - a Node stream: read once up to `maxBodyBytes` and pushed back so later parsers still see it;
 * - a Web `ReadableStream`: read once; the bytes come back in the outcome for the adapter to re-supply;
 * - `null`: no body.
 */
export type GateBodySource = Uint8Array | string | NodeBodyStream | ReadableStream<Uint8Array> | null

/** A request as the adapter read it from its framework. */
export interface GateRequestInput {
  method: string
  /** The request path as received, without the query string. */
  path: string
  /** The query string without the leading `?` ('' when none). */
  rawQuery: string
  /** Request headers with lowercased names. */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>
  /**
   * Node's `req.rawHeaders` (name, value, name, value, ...), where the framework has it: it shows a Gate
   * header sent on two field lines, which `headers` joins into one value (refused as ambiguous).
   */
  rawHeaders?: readonly string[]
  body: GateBodySource
  /** The framework's matched route (`/pets/:id` or `/pets/{id}`); the sidecar re-matches anyway. */
  routePattern?: string | null
}

/** What a handler reads after Gate allowed the request (`req.gate`, `ctx.state.gate`, `request.gate`). */
export interface GateContext {
  /** The verdict; null when the request passed fail-open without one. */
  readonly verdict: Verdict | null
  /** The verified receipt; null on a fail-open pass. */
  readonly receipt: HttpReceipt | null
  readonly evidence: readonly GuardEvidence[]
  /** The request id sent to the sidecar. */
  readonly requestId: string
  readonly caller: CallerIdentity
  /** Set only when `onSidecarError: 'allow'` let the request through: the error code that was passed. */
  readonly failOpen: string | null
  /** Present when the sidecar issued an execution nonce with the allow. */
  readonly executionNonce: SignedExecutionNonce | null
}

/**
 * Proceed to the app's handler: set `headers`, delete the request headers in `removeHeaders`, and give the
 * app the query `rawQuery` when it is not null (`appTarget` rewrites a request target with it).
 */
export interface GateAllowed {
  readonly allowed: true
  /** Response headers to set (`x-gate-receipt-id`, or `x-gate-fail-open`). */
  readonly headers: Readonly<Record<string, string>>
  /** Null when the path is in `skip` (Gate did not run). */
  readonly gate: GateContext | null
  /** The body bytes Gate read (null: none); a Node stream has already been replayed. */
  readonly body: Uint8Array | null
  /** The query string the app should see (`gate_capability` removed), or null when unchanged. */
  readonly rawQuery: string | null
  /** Request headers the app must not see: the capability is a credential for Gate, not input for handlers. */
  readonly removeHeaders: readonly string[]
}

/** Answer the client with `status`, `headers` and the JSON `body`; the handler does not run. */
export interface GateDenied {
  readonly allowed: false
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The structured error body (spec 02), or the evaluate response for cancel (500) and incomplete (428). */
  readonly body: GateErrorBody | EvaluateResponse
}

/** What the core decided for one request. */
export type GateOutcome = GateAllowed | GateDenied

/** The framework-neutral core an adapter drives. */
export interface GateCore {
  /** Never rejects: every failure becomes a denied outcome (fail closed) unless fail-open applies. */
  decide(input: GateRequestInput): Promise<GateOutcome>
  /** Closes the sidecar connections. */
  close(): Promise<void>
}
