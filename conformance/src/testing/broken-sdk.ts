// A minimal SDK under test for the suite's own tests. Without faults it fails closed the way spec 02
// asks (and passes every sdk.* check); each fault breaks one part of that, so a test can show the
// sdk.* check aimed at it FAILS. Test support only.
import { Agent, request } from 'undici'
import {
  callerIdentityHash,
  canonicalJson,
  checkHttpReceipt,
  contentHash,
  sha256Hex,
  uuidv7,
  type EvaluateResponse,
  type GateHttpRequest,
  type HttpMethod,
} from '@gate/sdk'
import { validate } from '@gate/schemas'
import { ANONYMOUS_CALLER } from '../gate-request.js'
import type { SdkAnswer, SdkUnderTest } from '../sdk-under-test.js'

export const SDK_FAULTS = [
  'fail-open', // any sidecar trouble lets the request through
  'errors-as-500', // every failure answers 500 gate_evaluation_failed
  'no-schema-check', // an answer is acted on without checking its schema
  'trust-embedded-key', // a receipt is verified with the key it names itself
  'no-receipt-check', // receipts are not verified at all
  'no-binding-check', // receipts are not checked against the request sent
] as const

export type SdkFault = (typeof SDK_FAULTS)[number]

class SdkFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** An SDK under test with the given faults (none: a correct, fail-closed SDK). */
export function createBrokenSdk(faults: readonly SdkFault[] = []): SdkUnderTest {
  const has = (f: SdkFault) => faults.includes(f)
  return async (options, req) => {
    const agent = new Agent({ connections: 1 })
    const send = async (method: 'GET' | 'POST', path: string, body?: string) => {
      const signal = AbortSignal.timeout(options.timeoutMs)
      try {
        const res = await request(options.sidecarUrl + path, {
          method,
          body,
          headers: { 'content-type': 'application/json' },
          dispatcher: agent,
          signal,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        })
        return { status: res.statusCode, text: await res.body.text() }
      } catch (err) {
        const code = (err as { code?: string }).code
        if (signal.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
          throw new SdkFailure(504, 'gate_timeout', 'the sidecar did not answer in time')
        }
        throw new SdkFailure(503, 'gate_sidecar_unreachable', 'the sidecar cannot be reached')
      }
    }
    try {
      const query = Object.fromEntries(new URLSearchParams(req.rawQuery))
      const sent: GateHttpRequest = {
        request_id: uuidv7(),
        method: req.method as HttpMethod,
        route_pattern: req.path,
        path: req.path,
        caller: ANONYMOUS_CALLER,
        body_hash: req.body === null ? null : sha256Hex(req.body),
        body_length: req.body === null ? 0 : Buffer.byteLength(req.body),
        timestamp: Math.floor(Date.now() / 1000),
      }
      if (Object.keys(query).length > 0) sent.query = query
      const res = await send('POST', '/gate/evaluate', JSON.stringify(sent))
      if (res.status !== 200) throw new SdkFailure(502, 'gate_evaluation_failed', `the sidecar answered ${res.status}`)
      let answer: EvaluateResponse
      try {
        answer = JSON.parse(res.text) as EvaluateResponse
      } catch {
        throw new SdkFailure(502, 'gate_evaluation_failed', 'the sidecar answered invalid JSON')
      }
      if (!has('no-schema-check') && !validate('gate.http.evaluate_response.v1', answer).ok) throw new SdkFailure(502, 'gate_evaluation_failed', 'the answer fails its schema')
      const receipt = answer.receipt as EvaluateResponse['receipt'] | undefined
      if (receipt !== undefined) {
        if (!has('no-binding-check')) {
          const expected = contentHash({ body_hash: sent.body_hash, method: sent.method, path: sent.path, query: sent.query ?? {}, route_pattern: receipt.route_pattern })
          if (canonicalJson(answer.verdict) !== canonicalJson(receipt.verdict) || receipt.request_id !== sent.request_id || receipt.content_hash !== expected || receipt.caller_identity_hash !== callerIdentityHash(sent.caller)) {
            throw new SdkFailure(502, 'gate_invalid_receipt', 'the receipt is not bound to this request')
          }
        }
        if (!has('no-receipt-check')) {
          let key = options.sidecarPublicKey
          if (key === null) {
            const live = await send('GET', '/gate/live')
            key = String((JSON.parse(live.text) as { kernel_key?: unknown }).kernel_key ?? '')
          }
          const trusted = has('trust-embedded-key') ? [receipt.kernel_key] : [key]
          if (!checkHttpReceipt(receipt, { trustedKeys: trusted }).response.ok) throw new SdkFailure(502, 'gate_invalid_receipt', 'the receipt does not verify')
        }
      }
      const v = answer.verdict
      if (v.verdict === 'allow') return { status: 200, body: { handled: true }, reachedHandler: true }
      if (v.verdict === 'deny') return refuse(v.http_status ?? 403, 'gate_access_denied', v.reason, receipt?.id ?? null)
      return { status: v.verdict === 'cancel' ? 500 : 428, body: answer, reachedHandler: false }
    } catch (err) {
      if (has('fail-open')) return { status: 200, body: { handled: true }, reachedHandler: true }
      if (has('errors-as-500')) return refuse(500, 'gate_evaluation_failed', (err as Error).message, null)
      if (err instanceof SdkFailure) return refuse(err.status, err.code, err.message, null)
      return refuse(500, 'gate_evaluation_failed', (err as Error).message, null)
    } finally {
      await agent.destroy()
    }
  }
}

function refuse(status: number, error: string, message: string, receiptId: string | null): SdkAnswer {
  return { status, body: { error, message, receipt_id: receiptId, suggestion: null }, reachedHandler: false }
}
