// What the proxy needs from the kernel, declared here so @gate/proxy never imports its caller: the
// sidecar's Kernel satisfies ProxyEvaluator<Evaluation> structurally and is wired in by
// `gate api protect` (ARCHITECTURE: sdk ← proxy ← sidecar).
import type { GateHttpRequest, HttpMethod, HttpReceipt, SignedExecutionNonce, Verdict } from '@gate/sdk'
import type { Tracer } from '@opentelemetry/api'
import type { UpstreamClient } from './upstream-client.js'

/** One evaluation request: the built GateHttpRequest plus the Gate headers of the proxied request. */
export interface ProxyEvaluateInput<R extends ProxyRoute = ProxyRoute> {
  request: GateHttpRequest
  /** What `matchRoute` answered for this request: the evaluator decides under it without matching again. */
  route?: R
  /** The capability token text: the X-Gate-Capability header, else the gate_capability query value. */
  capabilityHeader?: string
  /** X-Gate-Approval-Id of an approved retry. */
  approvalId?: string
  /** X-Gate-Execution-Nonce, already checked to be 32 lowercase hex. */
  nonceId?: string
}

/** The parts of an evaluation the proxy reads. */
export interface ProxyEvaluation {
  verdict: Verdict
  /** The decision receipt, durably stored before `evaluate` resolved. */
  receipt: HttpReceipt
  /** The HTTP status of the outcome (the decision receipt's `response_status`). */
  status: number
  /** The EvaluateResponse JSON (the 428 and 500 answers carry it as their body). */
  responseJson: string
  executionNonce?: SignedExecutionNonce
  /** Present on a pending approval (deny with http_status 409). */
  approval?: { approval_id: string; resume_path: string }
}

/** The finalized receipt: the decision re-signed with the answered status, scope `final`. */
export interface FinalizedReceipt {
  receipt: HttpReceipt
  json: string
}

/** A route as the evaluator matched it: its pattern (the raw path when none matched) and whether one did. */
export interface ProxyRoute {
  pattern: string
  matched?: boolean
}

/** The evaluator the proxy calls in-process. */
export interface ProxyEvaluator<E extends ProxyEvaluation = ProxyEvaluation, R extends ProxyRoute = ProxyRoute> {
  /** Evaluates and signs; resolves once the decision receipt is durably stored. */
  evaluate(input: ProxyEvaluateInput<R>): Promise<E>
  /** Re-signs the decision with the answered status; resolves once that receipt is durably stored. */
  finalize(decision: E, answeredStatus: number): Promise<FinalizedReceipt>
  /** The OpenAPI pattern a path matches, or the raw path when none does. */
  matchRoute(method: HttpMethod, path: string): R
}

/** The hop to the upstream as the proxy drives it: UpstreamClient's relay and close. */
export type UpstreamRelay = Pick<UpstreamClient, 'relay' | 'close'>

/** What `gate api protect` wires into the proxy besides the evaluator. */
export interface ProxyWiring {
  /** The hop to the upstream; default an UpstreamClient on the resolved options (a test injects a failing one). */
  upstream?: UpstreamRelay
  /** Told of each failure the last-resort handler turned into a 502 (the request's own answer says no more). */
  onUnexpectedError?: (err: unknown) => void
  /**
   * Set when tracing is on: a SERVER span per request and a CLIENT span per upstream hop
   * (proxy-tracing.ts); the evaluator makes the evaluation's own span.
   */
  tracer?: Tracer
}
