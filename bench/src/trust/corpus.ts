// The generated receipt corpus of the trust-query bench, the same for SQLite and PostgreSQL: ~1.2 KB HTTP
// receipts from one template (ids substituted per row, fake signatures under the authority seed's key)
// over 30 days of timestamps, 20 tenants, 1,000 capabilities held by 100 agents, 50 tools, four outcomes
// and costs on a fifth of the rows. Rows are stored as the kernel writes them, without their core form.
import { randomBytes } from 'node:crypto'
import { createSigner } from '@gate/sdk'
import type { ReceiptRow } from '@gate/trust'

export const DAY = 86400
export const DAYS = 30
export const T0 = 1_760_000_000
export const TENANTS = 20
export const CAPABILITIES = 1000
export const AGENTS = 100
export const TOOLS = 50
export const SERVICE_TOKEN = 'bench-service-token-0123456789abcdef'
/** The authority seed of the corpus's receipts and of the trust-control process that reads them. */
export const AUTHORITY_SEED = Buffer.alloc(32, 0x42)
export const AUTHORITY_KEY = createSigner({ secret: AUTHORITY_SEED }).publicKey
export const TENANT_TOKEN = 'bench-tenant-token-0123456789abcdef'

export function agentKey(agent: number): string {
  return agent.toString(16).padStart(64, 'a')
}

const TOOL_NAMES = Array.from({ length: TOOLS }, (_, i) => `${['GET', 'POST', 'PUT', 'DELETE', 'PATCH'][i % 5]} /v1/resource-${i}/{id}`)

const HTTP_TEMPLATE = JSON.stringify({
  boundary_class: 'prevent',
  caller_identity_hash: 'c'.repeat(64),
  capability_id: '@CAP@',
  content_hash: 'a'.repeat(64),
  evidence: [
    { details: 'capability @CAP@ grants @TOOL@', guard_name: 'CapabilityGuard', verdict: true },
    { details: 'capability not revoked', guard_name: 'RevocationGuard', verdict: true },
    { details: 'invocation 17 of 1000 for grant @TOOL@', guard_name: 'BudgetGuard', verdict: true },
  ],
  id: '@ID@',
  kernel_key: AUTHORITY_KEY,
  metadata: { gate_http_status_scope: 'decision' },
  method: 'POST',
  policy_hash: 'b'.repeat(64),
  receipt_kind: 'mediated_decision',
  redaction_mode: 'none',
  request_id: '@REQ@',
  response_status: 200,
  route_pattern: '/v1/resource/{id}',
  session_id: 'sess-2f9c1a7e',
  signature: 'e'.repeat(128),
  timestamp: 0,
  tool_origin: 'caller_executed',
  trust_level: 'mediated',
  verdict: { verdict: 'allow' },
})

function mix(n: number, salt: number): number {
  let x = (n ^ salt) >>> 0
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0
  return (x ^ (x >>> 16)) >>> 0
}

/** Row `n` of the corpus, stamped `timestamp`. */
export function createRow(n: number, timestamp: number): ReceiptRow {
  const receiptId = randomBytes(32).toString('hex')
  const capability = mix(n, 1) % CAPABILITIES
  const capabilityId = `cap-${capability}`
  const tool = TOOL_NAMES[mix(n, 2) % TOOLS]!
  const roll = mix(n, 3) % 100
  const outcome = roll < 90 ? 'allow' : roll < 98 ? 'deny' : roll < 99 ? 'cancelled' : 'incomplete'
  const costed = mix(n, 4) % 5 === 0
  const fill = (template: string) =>
    template.replace('@ID@', receiptId).replace('@REQ@', `req-${n}`).replaceAll('@CAP@', capabilityId).replaceAll('@TOOL@', tool).replace('"timestamp":0', `"timestamp":${timestamp}`)
  return {
    receiptId,
    timestamp,
    requestId: `req-${n}`,
    method: tool.split(' ')[0]!,
    routePattern: tool.split(' ')[1]!,
    toolServer: 'http',
    toolName: tool,
    outcome,
    capabilityId,
    tenant: `tenant-${capability % TENANTS}`,
    // 5% of the rows carry no subject key (the lineage join would attribute them)
    subjectKey: mix(n, 5) % 20 === 0 ? null : agentKey(capability % AGENTS),
    costUnits: costed ? mix(n, 6) % 10_000 : null,
    costCurrency: costed ? (n % 2 === 0 ? 'USD' : 'EUR') : null,
    attemptedCostUnits: costed && outcome !== 'allow' ? mix(n, 7) % 500 : null,
    kind: 'decision',
    // as the kernel writes them: the core form is made when the receipt is first read
    httpJson: fill(HTTP_TEMPLATE),
  }
}
