// Starts the real `gate mcp serve-http` for end-to-end tests and connects the SDK's Client to it over
// StreamableHTTPClientTransport, the way a remote agent does; plus raw HTTP helpers for what a
// well-behaved client never sends (bad headers, bodies, ids) and an SSE reader. Resolves once the
// process has logged its edge URL (never a sleep). The process is killed in teardown.
import type { Test } from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js'
import { scopedSignalFetch } from '@gate/mcp'
import { schemaErrors } from './http-client.js'
import { spawnGate, type GateProcess, type SpawnOptions } from './spawn-gate.js'

export const PROTOCOL_VERSION = '2025-11-25'

export interface GateMcpHttp {
  proc: GateProcess
  /** The edge's /mcp URL. */
  url: string
  /** The edge's base URL (admin routes). */
  base: string
  /** The control routes' base URL (approvals, /v1). */
  controlUrl: string
  waitForOutput(pattern: RegExp, from?: number): Promise<RegExpExecArray>
  connect(options?: ConnectOptions): Promise<{ client: Client; transport: StreamableHTTPClientTransport }>
}

export interface ConnectOptions {
  headers?: Record<string, string>
  sessionId?: string
  /** What the client declares (sampling, elicitation, roots); none by default. */
  capabilities?: ClientCapabilities
}

/** `gate mcp serve-http <args>`, started and listening. */
export async function startGateMcpHttp(t: Test, args: string[], options: SpawnOptions = {}): Promise<GateMcpHttp> {
  const proc = await spawnGate(['mcp', 'serve-http', ...args], options)
  t.teardown(() => proc.stop('SIGKILL'))
  const waitForOutput = (pattern: RegExp, from = 0) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(proc.output().slice(from))
        if (m === null) return false
        proc.child.stdout!.off('data', check)
        proc.child.stderr!.off('data', check)
        resolve(m)
        return true
      }
      if (check()) return
      proc.child.stdout!.on('data', check)
      proc.child.stderr!.on('data', check)
      proc.exited.then(() => check() || reject(new Error(`gate exited before ${pattern}:\n${proc.output()}`)))
    })
  const url = (await waitForOutput(/mcp edge listening on (https?:\/\/[^\s"]+)/))[1]!
  const controlUrl = (await waitForOutput(/control routes \(approvals\) on (http:\/\/[^\s"]+)/))[1]!
  const connect = async (connectOptions: ConnectOptions = {}) => {
    // each request its own abort signal: the transport's one long-lived signal would collect a listener per request (client-fetch.ts)
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: connectOptions.headers ?? {} }, sessionId: connectOptions.sessionId, fetch: scopedSignalFetch() })
    const client = new Client({ name: 'gate-e2e-http', version: '1.0.0' }, { capabilities: connectOptions.capabilities ?? {} })
    t.teardown(() => client.close())
    await client.connect(transport)
    return { client, transport }
  }
  return { proc, url, base: url.replace(/\/mcp$/, ''), controlUrl, waitForOutput, connect }
}

export interface RawAnswer {
  status: number
  headers: Headers
  text: string
  /** A JSON-RPC answer, or a gate.hosted.error.v1 body (`error` a code string) for a plain-HTTP failure. */
  json(): { id?: unknown; result?: Record<string, unknown>; error?: string | { code: number; message: string; data?: Record<string, unknown> }; message?: string }
}

const answer = async (response: Response): Promise<RawAnswer> => {
  const text = await response.text()
  // 431: a header block the HTTP parser refuses is answered before any route, by the listener
  if (response.status >= 400 && response.status !== 431 && new URL(response.url).pathname === '/mcp') checkHostedError(response.status, text)
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) }
}

/**
 * Every plain-HTTP failure of the edge's /mcp answers with a `gate.hosted.error.v1` body: checked on
 * each raw answer, so a test that sends a bad request also proves the body (a throw fails the test).
 */
export function checkHostedError(status: number, text: string): void {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`the edge answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`)
  }
  const errors = schemaErrors('gate.hosted.error.v1', body)
  if (errors.length > 0) throw new Error(`the edge's ${status} body fails gate.hosted.error.v1: ${errors.join('; ')}: ${text.slice(0, 200)}`)
}

/** A POST to /mcp with the headers a client sends unless overridden (null removes one). */
export async function rawPost(url: string, body: unknown, headers: Record<string, string | null> = {}): Promise<RawAnswer> {
  const merged: Record<string, string> = {}
  for (const [k, v] of Object.entries({ accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers })) if (v !== null) merged[k] = v
  return answer(await fetch(url, { method: 'POST', headers: merged, body: typeof body === 'string' ? body : JSON.stringify(body) }))
}

export async function rawRequest(url: string, method: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return answer(await fetch(url, { method, headers }))
}

export const initializeMessage = (id: number | string = 1, protocolVersion = PROTOCOL_VERSION) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})

/** A session opened with raw requests: initialize, then notifications/initialized. */
export async function rawSession(url: string, headers: Record<string, string> = {}): Promise<string> {
  const init = await rawPost(url, initializeMessage(), headers)
  const id = init.headers.get('mcp-session-id')
  if (init.status !== 200 || id === null) throw new Error(`initialize answered ${init.status}: ${init.text}`)
  const ready = await rawPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...headers, 'mcp-session-id': id })
  if (ready.status !== 202) throw new Error(`notifications/initialized answered ${ready.status}: ${ready.text}`)
  return id
}

export interface SseEvent {
  id: string | undefined
  data: string
}

/** The events of an SSE body. */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = []
  for (const block of text.split('\n\n')) {
    let id: string | undefined
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line.startsWith('id:')) id = line.slice(3).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).trim())
    }
    if (id !== undefined || data.length > 0) events.push({ id, data: data.join('\n') })
  }
  return events
}

/**
 * Opens a streaming request and reads SSE events until `until` says enough, then hangs up (the client
 * disconnecting mid-stream). Resolves with the status and the events read.
 */
export async function readStream(url: string, init: RequestInit, until: (events: SseEvent[]) => boolean): Promise<{ status: number; headers: Headers; events: SseEvent[] }> {
  const abort = new AbortController()
  const response = await fetch(url, { ...init, signal: abort.signal })
  if (response.status !== 200 || response.body === null) {
    const text = await response.text()
    return { status: response.status, headers: response.headers, events: [{ id: undefined, data: text }] }
  }
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let events: SseEvent[] = []
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    events = parseSse(text.slice(0, text.lastIndexOf('\n\n') + 2))
    if (until(events)) break
  }
  abort.abort()
  await reader.cancel().catch(() => {})
  return { status: response.status, headers: response.headers, events }
}
