// Sends `count` allowed evaluations (GET /pets) to a real sidecar and returns the receipts it answered;
// `tenant(n)` sets the caller tenant of the n-th.
import { sha256Hex, uuidv7, type HttpReceipt } from '@gate/sdk'
import { call } from './http-client.js'

export async function evaluateMany(sidecarUrl: string, count: number, tenant: (n: number) => string | undefined = () => undefined): Promise<HttpReceipt[]> {
  const receipts: HttpReceipt[] = []
  for (let n = 0; n < count; n++) {
    const r = await call(`${sidecarUrl}/gate/evaluate`, {
      body: {
        request_id: uuidv7(),
        method: 'GET',
        path: '/pets',
        route_pattern: '/pets',
        caller: { subject: `u${n}`, auth_method: { method: 'bearer', token_hash: sha256Hex(`t${n}`) }, tenant: tenant(n) },
        timestamp: Math.floor(Date.now() / 1000),
      },
    })
    if (r.status !== 200) throw new Error(`evaluate answered ${r.status}: ${r.text}`)
    receipts.push((r.body as { receipt: HttpReceipt }).receipt)
  }
  return receipts
}
