// Signing and verification of HttpReceipts (spec 02, "Receipt signing order"). The body is
// canonicalized once, member by member; the id preimage, the signed bytes and the stored JSON are
// all joined from those member texts.
import { SigningError } from '../errors.js'
import type { HttpReceipt, HttpReceiptBody, VerifyReceiptResponse } from '../types.js'
import { CanonicalMembers } from './canonical-json.js'
import type { CryptoBackendName } from './crypto-backend.js'
import { isSha256Hex, utf8 } from './hex.js'
import { sha256Hex } from './sha256.js'
import type { Signer } from './signer.js'
import { checkSignature, checkSignatureOffThread, type VerifySignatureResult } from './verify-signature.js'

export interface SignedHttpReceipt {
  receipt: HttpReceipt
  /** The receipt's canonical JSON, signature included: what is stored and sent, byte for byte. */
  json: string
}

/** Signs a receipt body and returns the receipt. `id` and `kernel_key` are assigned here. */
export function signHttpReceipt(body: HttpReceiptBody, signer: Signer): HttpReceipt {
  return signHttpReceiptJson(body, signer).receipt
}

/** Signs a receipt body; returns the receipt and its canonical JSON. */
export function signHttpReceiptJson(body: HttpReceiptBody, signer: Signer): SignedHttpReceipt {
  const prepared = prepareHttpReceipt(body, signer.publicKey)
  let signature: string
  try {
    signature = signer.sign(utf8(prepared.signingInput))
  } catch (err) {
    throw new SigningError('the signer failed', err)
  }
  return prepared.attach(signature)
}

/** A receipt with its id assigned, waiting for the signature over `signingInput`. */
export interface PreparedHttpReceipt {
  /** The canonical JSON of the body with `kernel_key` and `id`: the bytes to sign (UTF-8). */
  signingInput: string
  /** Attaches the signature over `signingInput`. */
  attach(signature: string): SignedHttpReceipt
}

/**
 * Steps (1)-(3) of the signing order for a signer reached asynchronously (the sidecar signs on a
 * worker thread); `signHttpReceiptJson` is this plus a synchronous signature.
 */
export function prepareHttpReceipt(body: HttpReceiptBody, publicKey: string): PreparedHttpReceipt {
  // (1) the body: every field but `signature`; a caller-supplied id is overwritten below
  const b = body as Record<string, unknown>
  if (b.kernel_key !== undefined && b.kernel_key !== publicKey) {
    throw new SigningError('kernel_key does not match the signer public key')
  }
  const skip = b.observation_outcome === null ? SKIP_WITH_NULL_OUTCOME : SKIP
  const members = new CanonicalMembers(b, skip)
  members.set('kernel_key', `"${publicKey}"`)
  // (2) the content-addressed id
  const id = sha256Hex(members.join())
  // (3) authority semantics
  const problem = authoritySemanticsProblem(b)
  if (problem !== undefined) throw new SigningError(problem)
  // (4) the canonical bytes of the body with its id are what gets signed
  members.set('id', `"${id}"`)
  return {
    signingInput: members.join(),
    attach(signature: string): SignedHttpReceipt {
      // (5) attach the signature
      members.set('signature', `"${signature}"`)
      const receipt = { ...b, kernel_key: publicKey, id, signature } as unknown as HttpReceipt
      if (skip === SKIP_WITH_NULL_OUTCOME) delete (receipt as { observation_outcome?: unknown }).observation_outcome
      return { receipt, json: members.join() }
    },
  }
}

const SKIP = new Set(['id', 'signature', 'kernel_key'])
const SKIP_WITH_NULL_OUTCOME = new Set([...SKIP, 'observation_outcome'])

/** Why a body breaks the HTTP authority semantics, or undefined when it holds them. */
export function authoritySemanticsProblem(body: Record<string, unknown>): string | undefined {
  if (body.receipt_kind !== 'mediated_decision') return `receipt_kind must be mediated_decision, got ${String(body.receipt_kind)}`
  if (body.boundary_class !== 'prevent') return `boundary_class must be prevent, got ${String(body.boundary_class)}`
  if (body.observation_outcome !== undefined && body.observation_outcome !== null) return 'observation_outcome must not be present'
  if (body.trust_level !== 'mediated') return `trust_level must be mediated, got ${String(body.trust_level)}`
  return undefined
}

export type ReceiptCheckStep = 'shape' | 'semantics' | 'receipt_id' | 'signature' | 'signer' | 'parameter_hash'

export interface HttpReceiptCheck {
  response: VerifyReceiptResponse
  /** The first failing step, in the spec's order, or null when `ok`. */
  failedStep: ReceiptCheckStep | null
  /** A sentence for humans (CLI, logs). */
  detail: string
}

export interface VerifyHttpReceiptOptions {
  /** Public keys whose signatures are trusted (`signer_trusted`). */
  trustedKeys?: Iterable<string>
  backend?: CryptoBackendName
}

/** Verifies a receipt (spec 02, VerifyReceiptResponse). Never throws. */
export function verifyHttpReceipt(receipt: unknown, options: VerifyHttpReceiptOptions = {}): VerifyReceiptResponse {
  return checkHttpReceipt(receipt, options).response
}

/** The outcome a verdict records (spec 02 `result`, spec 03 `outcome`): `cancel` is written `cancelled`. */
export type VerdictResult = 'allow' | 'deny' | 'cancelled' | 'incomplete'

const VERDICT_RESULT: Record<string, VerdictResult> = { allow: 'allow', deny: 'deny', cancel: 'cancelled', incomplete: 'incomplete' }

/** The result string of a verdict tag. */
export function verdictResult(verdict: { verdict: string }): VerdictResult {
  const r = VERDICT_RESULT[verdict.verdict]
  if (r === undefined) throw new TypeError(`unknown verdict tag ${verdict.verdict}`)
  return r
}

/** The fields a receipt store files an HttpReceipt under (the columns every store row has). */
export interface HttpReceiptColumns {
  receiptId: string
  timestamp: number
  requestId: string
  method: HttpReceipt['method']
  routePattern: string
  /** Always `http`, as in the core form (spec 02 mapping). */
  toolServer: 'http'
  /** `{METHOD} {route_pattern}`, as in the core form. */
  toolName: string
  outcome: VerdictResult
  capabilityId: string | null
}

/** The store columns of a signed HttpReceipt, read off the receipt itself. */
export function httpReceiptColumns(receipt: HttpReceipt): HttpReceiptColumns {
  return {
    receiptId: receipt.id,
    timestamp: receipt.timestamp,
    requestId: receipt.request_id,
    method: receipt.method,
    routePattern: receipt.route_pattern,
    toolServer: 'http',
    toolName: `${receipt.method} ${receipt.route_pattern}`,
    outcome: verdictResult(receipt.verdict),
    capabilityId: receipt.capability_id ?? null,
  }
}

/** Verifies a receipt and says which step failed first. Never throws. */
export function checkHttpReceipt(receipt: unknown, options: VerifyHttpReceiptOptions = {}): HttpReceiptCheck {
  const step = checkUpToSignature(receipt, options)
  if ('result' in step) return step.result
  return afterSignature(step, checkSignature(step.kernelKey, step.message, step.signature, options.backend))
}

/**
 * `checkHttpReceipt` with the signature verified off the event loop where node:crypto allows
 * (`checkSignatureOffThread`); the other steps run here. Never rejects.
 */
export async function checkHttpReceiptOffThread(receipt: unknown, options: Pick<VerifyHttpReceiptOptions, 'trustedKeys'> = {}): Promise<HttpReceiptCheck> {
  const step = checkUpToSignature(receipt, options)
  if ('result' in step) return step.result
  return afterSignature(step, await checkSignatureOffThread(step.kernelKey, step.message, step.signature))
}

/** Where a check stands once every step before the signature passed: what to verify, and with which key. */
interface SignatureStep {
  response: VerifyReceiptResponse
  kernelKey: string
  message: Uint8Array
  signature: string
}

function afterSignature(step: SignatureStep, sig: VerifySignatureResult): HttpReceiptCheck {
  const { response } = step
  if (!sig.valid) return { response, failedStep: 'signature', detail: sig.reason ?? 'signature does not verify' }
  response.signature_valid = true
  if (!response.signer_trusted) return { response, failedStep: 'signer', detail: 'kernel_key is not a trusted signer' }
  if (!response.parameter_hash_valid) return { response, failedStep: 'parameter_hash', detail: 'content_hash is not a 64-character lowercase hex digest' }
  response.ok = true
  response.authorized = response.result === 'allow'
  return { response, failedStep: null, detail: 'ok' }
}

function checkUpToSignature(receipt: unknown, options: Pick<VerifyHttpReceiptOptions, 'trustedKeys'>): { result: HttpReceiptCheck } | SignatureStep {
  const r = (typeof receipt === 'object' && receipt !== null && !Array.isArray(receipt) ? receipt : {}) as Record<string, unknown>
  const kernelKey = typeof r.kernel_key === 'string' ? r.kernel_key : ''
  const verdictTag = (r.verdict as { verdict?: unknown } | undefined)?.verdict
  const response: VerifyReceiptResponse = {
    signature_valid: false,
    signer_trusted: false,
    receipt_id_valid: false,
    parameter_hash_valid: isSha256Hex(r.content_hash),
    receipt_kind: String(r.receipt_kind ?? ''),
    boundary_class: String(r.boundary_class ?? ''),
    trust_level: String(r.trust_level ?? ''),
    result: typeof verdictTag === 'string' ? (VERDICT_RESULT[verdictTag] ?? verdictTag) : '',
    authorized: false,
    signer_key_hex: kernelKey,
    ok: false,
  }
  if (r !== receipt) return { result: { response, failedStep: 'shape', detail: 'not a JSON object' } }
  response.signer_trusted = kernelKey !== '' && isTrusted(kernelKey, options.trustedKeys)

  let members: CanonicalMembers
  try {
    const { signature: _signature, ...body } = r
    members = new CanonicalMembers(body)
  } catch (err) {
    return { result: { response, failedStep: 'shape', detail: (err as Error).message } }
  }
  response.receipt_id_valid = typeof r.id === 'string' && sha256Hex(members.join('id')) === r.id

  const semantics = authoritySemanticsProblem(r)
  if (semantics !== undefined) return { result: { response, failedStep: 'semantics', detail: semantics } }
  if (!response.receipt_id_valid) return { result: { response, failedStep: 'receipt_id', detail: 'id is not the hash of the receipt body' } }
  return { response, kernelKey, message: utf8(members.join()), signature: r.signature as string }
}

function isTrusted(key: string, trusted: Iterable<string> | undefined): boolean {
  if (trusted === undefined) return false
  if (trusted instanceof Set) return trusted.has(key)
  for (const k of trusted) if (k === key) return true
  return false
}
