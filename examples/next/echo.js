// What every route answers: the parsed body, what Gate decided, the query and the capability header
// as the handler sees them (the token must not be visible here).
export async function echo(request, gate) {
  const text = request.method === 'GET' ? '' : await request.text()
  return Response.json({
    body: text === '' ? null : JSON.parse(text),
    gate,
    query: Object.fromEntries(new URL(request.url).searchParams),
    capabilityHeader: request.headers.get('x-gate-capability'),
  })
}

/** The `gate` member from a withGate handler's context. */
export function summarize(context) {
  return {
    verdict: context?.verdict?.verdict ?? null,
    receiptId: context?.receipt?.id ?? null,
    failOpen: context?.failOpen ?? null,
    skipped: context === null,
  }
}

/** The `gate` member from what the edge middleware passed on. */
export function summarizeForwarded({ receiptId, failOpen }) {
  return { verdict: receiptId ? 'allow' : null, receiptId, failOpen, skipped: !receiptId && !failOpen }
}
