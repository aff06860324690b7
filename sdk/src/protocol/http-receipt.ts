// Signing and verification of HttpReceipts (spec 02, "Receipt signing order"). The body is
// canonicalized once, member by member; the id preimage, the signed bytes and the stored JSON are
// all joined from those member texts.
import { SigningError } from '../errors.js'
import type { HttpReceipt, HttpReceiptBody, VerifyReceiptResponse } from '../types.js'
import { CanonicalMembers } from './canonical-json.js'
import { canonicalObjectMembers, type JsonMember } from './json-text.js'
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
      return { receipt: signedHttpReceipt(body, publicKey, id, signature), json: members.join() }
    },
  }
}

/**
 * The receipt object `signHttpReceiptJson` returns for `body`, from the id and signature it assigned:
 * a thread that signed elsewhere sends back those two strings and its JSON, not the object.
 */
export function signedHttpReceipt(body: HttpReceiptBody, publicKey: string, id: string, signature: string): HttpReceipt {
  const receipt = { ...body, kernel_key: publicKey, id, signature } as unknown as HttpReceipt
  if ((body as { observation_outcome?: unknown }).observation_outcome === null) delete (receipt as { observation_outcome?: unknown }).observation_outcome
  return receipt
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
  /**
   * The JSON text `receipt` was parsed from, byte for byte (the sidecar sends its canonical form).
   * When it is canonical, the id and the signature are checked over those bytes instead of over a
   * re-canonicalization of the parsed object: RFC 8785 makes them the same bytes. Otherwise it is
   * ignored, and the receipt is canonicalized as without it.
   */
  receiptText?: string
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
  const fromText = checkOverTextUpToSignature(receipt, options)
  if (fromText !== undefined) {
    const sig = checkSignature(fromText.kernelKey, fromText.message, fromText.signature, options.backend)
    if (sig.valid) return afterSignature(fromText, sig)
  }
  // not canonical, or it did not verify: the full check decides, and says which step failed
  const step = checkUpToSignature(receipt, options)
  if ('result' in step) return step.result
  return afterSignature(step, checkSignature(step.kernelKey, step.message, step.signature, options.backend))
}

/**
 * `checkHttpReceipt` with the signature verified off the event loop where node:crypto allows
 * (`checkSignatureOffThread`); the other steps run here. Never rejects.
 */
export async function checkHttpReceiptOffThread(receipt: unknown, options: Pick<VerifyHttpReceiptOptions, 'trustedKeys' | 'receiptText'> = {}): Promise<HttpReceiptCheck> {
  const fromText = checkOverTextUpToSignature(receipt, options)
  if (fromText !== undefined) {
    const sig = await checkSignatureOffThread(fromText.kernelKey, fromText.message, fromText.signature)
    if (sig.valid) return afterSignature(fromText, sig)
  }
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

/**
 * The steps before the signature, over `options.receiptText`: undefined unless that text is canonical,
 * holds the receipt's signature as its `signature` member, and every step up to the signature passes
 * (the caller then verifies the signature; on any failure it runs the full check instead). Equivalence
 * with the full check, for a canonical text: removing one member from a canonical object text leaves
 * the canonical text of the rest (members are written independently, in name order), so the text less
 * `signature` is the canonical body that was signed and, less `id` too, the id's preimage.
 */
function checkOverTextUpToSignature(receipt: unknown, options: Pick<VerifyHttpReceiptOptions, 'trustedKeys' | 'receiptText'>): SignatureStep | undefined {
  const text = options.receiptText
  if (text === undefined || typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) return undefined
  const r = receipt as Record<string, unknown>
  if (typeof r.signature !== 'string' || typeof r.id !== 'string' || authoritySemanticsProblem(r) !== undefined) return undefined
  const members = canonicalObjectMembers(text)
  if (members === undefined) return undefined
  const signature = members.find(m => m.key === 'signature')
  // the text must hold the very signature the parsed receipt carries
  if (signature === undefined || text.slice(signature.valueStart, signature.end) !== `"${r.signature}"`) return undefined
  const signed = withoutMembers(text, members, key => key === 'signature')
  if (sha256Hex(withoutMembers(text, members, key => key === 'signature' || key === 'id')) !== r.id) return undefined
  const response = initialResponse(r)
  response.signer_trusted = response.signer_key_hex !== '' && isTrusted(response.signer_key_hex, options.trustedKeys)
  response.receipt_id_valid = true
  return { response, kernelKey: response.signer_key_hex, message: utf8(signed), signature: r.signature }
}

/** The object text less the members `omit` names: the kept members' text, in runs as they lie in `text`. */
function withoutMembers(text: string, members: readonly JsonMember[], omit: (key: string) => boolean): string {
  let out = '{'
  let runStart = -1
  let runEnd = -1
  for (const m of members) {
    if (!omit(m.key)) {
      if (runStart < 0) runStart = m.start
      runEnd = m.end
    } else if (runStart >= 0) {
      out += (out.length > 1 ? ',' : '') + text.slice(runStart, runEnd)
      runStart = -1
    }
  }
  if (runStart >= 0) out += (out.length > 1 ? ',' : '') + text.slice(runStart, runEnd)
  return out + '}'
}

function checkUpToSignature(receipt: unknown, options: Pick<VerifyHttpReceiptOptions, 'trustedKeys'>): { result: HttpReceiptCheck } | SignatureStep {
  const r = (typeof receipt === 'object' && receipt !== null && !Array.isArray(receipt) ? receipt : {}) as Record<string, unknown>
  const response = initialResponse(r)
  const kernelKey = response.signer_key_hex
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

/** The answer before any step ran: every check false, the receipt's own values as strings. */
function initialResponse(r: Record<string, unknown>): VerifyReceiptResponse {
  const kernelKey = typeof r.kernel_key === 'string' ? r.kernel_key : ''
  const verdictTag = (r.verdict as { verdict?: unknown } | undefined)?.verdict
  return {
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
}

function isTrusted(key: string, trusted: Iterable<string> | undefined): boolean {
  if (trusted === undefined) return false
  if (trusted instanceof Set) return trusted.has(key)
  for (const k of trusted) if (k === key) return true
  return false
}
