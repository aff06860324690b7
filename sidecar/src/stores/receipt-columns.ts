// The writer's side of the signed filter columns (@gate/trust's stores/receipt-columns.ts): a row's tenant
// and agent subject come from the writer's context, so the writer signs them into the receipt before it
// is signed (`bindReceiptContext`, the only path into the log), as `metadata.gate_tenant` and
// `metadata.gate_subject_key` (a core receipt carries its tenant in `tenant_id`). Then every column of a
// row is a function of its signed bytes, and `gate receipt audit` can recompute each one.
import type { HttpReceiptBody } from '@gate/sdk'
import { SUBJECT_METADATA_KEY, TENANT_METADATA_KEY } from '@gate/trust'

/** What the writer knows beyond the body that the row files it under. */
export interface BoundContext {
  tenant?: string | null
  subjectKey?: string | null
}

/** The HTTP receipt body with the row's tenant and subject signed into its metadata (absent when null). */
export function bindReceiptContext(body: HttpReceiptBody, context: BoundContext): HttpReceiptBody {
  const metadata = boundMetadata(body.metadata, context)
  return metadata === body.metadata ? body : { ...body, metadata }
}

/** `bindReceiptContext` for a core body: the tenant is `tenant_id`, the subject a metadata key. */
export function bindCoreReceiptContext<B extends { metadata?: Record<string, unknown> | null; tenant_id?: string | null }>(body: B, context: BoundContext): B {
  const metadata = boundMetadata(body.metadata, { subjectKey: context.subjectKey })
  const tenant = context.tenant === undefined ? body.tenant_id : context.tenant
  return metadata === body.metadata && tenant === body.tenant_id ? body : { ...body, metadata, tenant_id: tenant }
}

function boundMetadata(metadata: Record<string, unknown> | null | undefined, context: BoundContext): Record<string, unknown> | null | undefined {
  const tenant = context.tenant ?? null
  const subject = context.subjectKey ?? null
  if (tenant === null && subject === null) return metadata
  const out: Record<string, unknown> = { ...(metadata ?? {}) }
  if (tenant !== null) out[TENANT_METADATA_KEY] = tenant
  if (subject !== null) out[SUBJECT_METADATA_KEY] = subject
  return out
}
