// A fetch for the SDK's StreamableHTTPClientTransport that gives each request its own abort signal.
// The transport passes one long-lived signal (its AbortController, aborted on close) to every fetch,
// and Node's fetch (undici) adds an abort listener to that signal per request, removed only when the
// Request is garbage collected: a client making calls faster than collections come accumulates
// thousands (`MaxListenersExceededWarning: 1834 abort listeners added to [AbortSignal]` in
// `npm run bench -- mcp`). Here the long-lived signal holds one listener per request in flight, removed
// when the answer's body has been read to its end, has failed or was cancelled.

/** Wraps `base` so a request's abort listener on the caller's signal lasts only as long as the request. */
export function scopedSignalFetch(base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const outer = init?.signal
    if (outer === undefined || outer === null) return base(input, init)
    const inner = new AbortController()
    const forward = () => inner.abort(outer.reason)
    const release = () => outer.removeEventListener('abort', forward)
    if (outer.aborted) forward()
    else outer.addEventListener('abort', forward, { once: true })
    let response: Response
    try {
      response = await base(input, { ...init, signal: inner.signal })
    } catch (err) {
      release()
      throw err
    }
    if (response.body === null) {
      release()
      return response
    }
    const reader = response.body.getReader()
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read()
          if (done) {
            release()
            controller.close()
          } else controller.enqueue(value)
        } catch (err) {
          release()
          controller.error(err)
        }
      },
      cancel(reason) {
        release()
        return reader.cancel(reason)
      },
    })
    const scoped = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
    Object.defineProperty(scoped, 'url', { value: response.url })
    return scoped
  }
}
