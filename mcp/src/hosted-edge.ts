// The hosted MCP edge (spec 03, "Hosted session transport"): POST, GET and DELETE /mcp over the SDK's
// Streamable HTTP server transport, one transport and one MCP edge Server per session. The SDK does the
// streaming (SSE answers, the one GET stream, Last-Event-ID resumption); this module adds what spec 03
// asks beyond it: admission, exactly one protocol version, `notifications/initialized` before ready-state
// methods, a supplied MCP-Protocol-Version matching the session's, the states and their ends (DELETE,
// idle expiry, drain), replay ids `{session_id}-{sequence}` with 409 outside the window, caps on
// sessions (in all and per caller), streams and bodies, Host and Origin against DNS rebinding (`screen`,
// for every route of the listener), and sessions kept in an edge-session store so a restarted edge
// resumes them (docs/mcp.md).
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { CallerSessions } from './caller-sessions.js'
import {
  CapacityExhaustedError,
  EdgeDrainingError,
  HostedBadRequestError,
  HostedForbiddenError,
  HostedMethodNotAllowedError,
  NotAcceptableError,
  ProtocolVersionMismatchError,
  ReplayWindowExceededError,
  SessionNotFoundError,
  SessionNotReadyError,
  SessionTerminatedError,
  StreamAlreadyOpenError,
  TooManySessionsError,
  UnsupportedMediaTypeError,
} from './errors.js'
import { ENDED_STATES, type EdgeSessionRecord, type EdgeSessionStore, type HostedSessionState } from './edge-session-store.js'
import type { Admission } from './hosted-admission.js'
import {
  acceptsPost,
  acceptsStream,
  GATE_INCOMPATIBLE_PEER,
  HOSTED_PROTOCOL_VERSION,
  isJsonContentType,
  readJsonBody,
  sendHostedError,
  sendJsonRpcError,
  sendUnauthorized,
} from './hosted-http.js'
import type { RebindingGuard } from '@gate/sdk/server'
import { EventWriter } from './event-writer.js'
import { SessionEvents } from './session-events.js'
import { dispatchByShape } from './shape-dispatch.js'

export interface HostedLimits {
  /** Live sessions at once; an initialize past it is 503. */
  maxSessions: number
  /** Live sessions of one admitted principal at once; an initialize past it is 429. */
  maxSessionsPerCaller: number
  /** Open GET streams at once, over all sessions; one past it is 503. */
  maxStreams: number
  /** Largest POST body. */
  maxBodyBytes: number
  /** A session without a request or an open stream for this long expires. */
  idleMs: number
  /** Events retained per session for a Last-Event-ID replay. */
  replayWindow: number
}

export interface HostedEdgeOptions {
  /**
   * Builds the MCP edge Server of one session (createMcpEdge and its relays, and the session's own
   * connection to a wrapped server); not yet connected. `capability` is the X-Gate-Capability the
   * initialize carried (kept in memory only: a resumed session has none, and its client's per-request
   * header serves instead); `clientCapabilities` what the session's client declared. Closing the
   * Server releases what it holds.
   */
  createSessionServer(session: { id: string; capability: string | undefined; clientCapabilities: Record<string, unknown> }): Promise<Server>
  store: EdgeSessionStore
  admission: Admission
  /** Host and Origin against DNS rebinding: `screen` refuses what it refuses. */
  rebinding: RebindingGuard
  limits: HostedLimits
  log: (line: string) => void
  /** Unix milliseconds. */
  now?: () => number
}

/** A session as the admin routes show it. */
export interface HostedSessionView extends Omit<EdgeSessionRecord, 'principal' | 'clientCapabilities'> {
  live: boolean
  openStreams: number
  inFlight: number
}

interface LiveSession {
  record: EdgeSessionRecord
  transport: StreamableHTTPServerTransport
  server: Server
  events: SessionEvents
  streams: number
  inFlight: number
  dirty: boolean
}

const READY_EXEMPT = new Set(['ping', 'initialize'])

export class HostedEdge {
  readonly #options: HostedEdgeOptions
  readonly #live = new Map<string, LiveSession>()
  // resumes under way: concurrent first requests of a resumed session share one transport
  readonly #resuming = new Map<string, Promise<LiveSession>>()
  // live sessions (and those being opened) by principal: the per-caller cap
  readonly #callers = new CallerSessions()
  // initializes between the cap checks and their session's entry in #live
  #opening = 0
  readonly #now: () => number
  // the sessions' events go to the store behind the answers, in batches
  readonly #events: EventWriter
  readonly #sweeper: NodeJS.Timeout
  #streams = 0
  #inFlight = 0
  #draining = false
  #stopping = false
  #idle: (() => void) | undefined

  constructor(options: HostedEdgeOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#events = new EventWriter(options.store, options.limits.replayWindow, options.log)
    const every = Math.max(100, Math.min(15_000, Math.floor(options.limits.idleMs / 4)))
    this.#sweeper = setInterval(() => void this.sweep().catch(err => options.log(`session sweep failed: ${(err as Error).message}`)), every)
    this.#sweeper.unref()
  }

  /** Live sessions, open GET streams and whether the edge is draining. */
  stats(): { sessions: number; streams: number; inFlight: number; draining: boolean } {
    return { sessions: this.#live.size, streams: this.#streams, inFlight: this.#inFlight, draining: this.#draining }
  }

  /** The ready sessions' servers, for what concerns every session (a tool list change). */
  readyServers(): Server[] {
    return [...this.#live.values()].filter(s => s.record.state === 'ready').map(s => s.server)
  }

  /**
   * Answers 403 and returns true when Host or Origin is refused (DNS rebinding). The listener calls it
   * before routing, for every request: /mcp, /admin/* and unknown paths alike.
   */
  screen(req: IncomingMessage, res: ServerResponse): boolean {
    const refusal = this.#options.rebinding.refusal(req)
    if (refusal === undefined) return false
    sendHostedError(res, new HostedForbiddenError(refusal))
    return true
  }

  /** POST, GET and DELETE /mcp (after `screen`). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#draining) return this.#refuseDraining(res)
    const admitted = await this.#options.admission.admit(req.headers.authorization)
    if (!admitted.ok) return sendUnauthorized(res, admitted)
    if (req.method === 'POST') return this.#post(req, res, admitted.principal)
    if (req.method === 'GET') return this.#get(req, res, admitted.principal)
    if (req.method === 'DELETE') return this.#delete(req, res, admitted.principal)
    return sendHostedError(res, new HostedMethodNotAllowedError())
  }

  async #post(req: IncomingMessage, res: ServerResponse, principal: string): Promise<void> {
    if (!acceptsPost(req)) return sendHostedError(res, new NotAcceptableError('both application/json and text/event-stream'))
    if (!isJsonContentType(req)) return sendHostedError(res, new UnsupportedMediaTypeError())
    const body = await readJsonBody(req, this.#options.limits.maxBodyBytes)
    if (!body.ok) return sendHostedError(res, body.error)
    if (Array.isArray(body.value)) return sendHostedError(res, new HostedBadRequestError(`Invalid Request: batches are not part of protocol ${HOSTED_PROTOCOL_VERSION}; send one message per POST`))
    const parsed = JSONRPCMessageSchema.safeParse(body.value)
    if (!parsed.success) return sendHostedError(res, new HostedBadRequestError('Invalid Request: not a JSON-RPC 2.0 message'))
    const message = parsed.data as JSONRPCMessage & { method?: string; id?: string | number; params?: Record<string, unknown> }
    if (message.method !== undefined && message.id === undefined && !message.method.startsWith('notifications/')) {
      return sendHostedError(res, new HostedBadRequestError(`Invalid Request: ${message.method} is a request and needs an id`))
    }
    if (message.method === 'initialize') return this.#initialize(req, res, principal, message)
    const session = await this.#session(req, res, principal)
    if (session === undefined) return
    if (message.method === 'notifications/initialized' && session.record.state === 'initializing') {
      session.record.state = 'ready'
      await this.#options.store.put(session.record)
    } else if (message.method !== undefined && message.id !== undefined && !READY_EXEMPT.has(message.method) && session.record.state !== 'ready') {
      return sendHostedError(res, new SessionNotReadyError(message.method))
    }
    this.#track(session, res, 'request')
    await session.transport.handleRequest(req, res, body.value)
  }

  async #initialize(req: IncomingMessage, res: ServerResponse, principal: string, message: { id?: string | number; params?: Record<string, unknown> }): Promise<void> {
    const id = message.id ?? null
    if (req.headers['mcp-session-id'] !== undefined) return sendHostedError(res, new HostedBadRequestError('Invalid Request: initialize must not carry MCP-Session-Id'))
    const params = message.params ?? {}
    const version = params.protocolVersion
    if (version !== HOSTED_PROTOCOL_VERSION) {
      const gateError = { code: GATE_INCOMPATIBLE_PEER, category: 'protocol', name: 'incompatible_peer', transient: false, message: `protocol version ${JSON.stringify(version)} is not supported`, supportedVersions: [HOSTED_PROTOCOL_VERSION] }
      return sendJsonRpcError(res, 200, ErrorCode.InvalidRequest, `Unsupported protocol version ${String(version)}: this edge speaks ${HOSTED_PROTOCOL_VERSION} only`, { id, data: { gateError } })
    }
    const { maxSessions, maxSessionsPerCaller } = this.#options.limits
    // the caller's own cap first: one token filling its share is its answer, not everyone's 503
    if (this.#callers.count(principal) >= maxSessionsPerCaller) {
      const waitMs = this.#callers.msToFirstExpiry(principal, this.#options.limits.idleMs, this.#now())
      return sendHostedError(res, new TooManySessionsError(maxSessionsPerCaller, Math.max(1, Math.ceil(waitMs / 1000))))
    }
    if (this.#live.size + this.#opening >= maxSessions) {
      return sendHostedError(res, new CapacityExhaustedError('sessions', maxSessions))
    }
    const now = this.#now()
    const clientInfo = params.clientInfo as { name?: unknown; version?: unknown } | undefined
    const record: EdgeSessionRecord = {
      id: randomUUID(),
      state: 'initializing',
      protocolVersion: HOSTED_PROTOCOL_VERSION,
      principal,
      clientInfo: { name: String(clientInfo?.name ?? ''), version: String(clientInfo?.version ?? '') },
      clientCapabilities: typeof params.capabilities === 'object' && params.capabilities !== null ? (params.capabilities as Record<string, unknown>) : {},
      createdAt: now,
      lastActiveAt: now,
    }
    // both places are taken before the first await, so concurrent initializes cannot pass the caps together
    this.#opening++
    this.#callers.add(record)
    let session: LiveSession
    try {
      session = await this.#open(record, headerText(req.headers['x-gate-capability']), false)
    } catch (err) {
      if (!this.#live.has(record.id)) this.#callers.remove(record)
      // the session's tool server could not start: the initialize is answered, no session is made
      this.#options.log(`initialize failed: ${(err as Error).message}`)
      return sendJsonRpcError(res, 200, ErrorCode.InternalError, `the tool server could not be started for this session: ${(err as Error).message}`, { id })
    } finally {
      this.#opening--
    }
    await this.#options.store.put(record)
    this.#track(session, res, 'request')
    await session.transport.handleRequest(req, res, message)
  }

  async #get(req: IncomingMessage, res: ServerResponse, principal: string): Promise<void> {
    if (!acceptsStream(req)) return sendHostedError(res, new NotAcceptableError('text/event-stream'))
    const session = await this.#session(req, res, principal)
    if (session === undefined) return
    const lastEventId = req.headers['last-event-id']
    if (typeof lastEventId === 'string' && lastEventId !== '') {
      const refused = await session.events.refusal(lastEventId)
      if (refused !== undefined) {
        const why = refused === 'foreign' ? 'is not an event of this session' : `is outside the retained window of ${this.#options.limits.replayWindow} events`
        return sendHostedError(res, new ReplayWindowExceededError(lastEventId, why))
      }
    }
    if (session.streams > 0) return sendHostedError(res, new StreamAlreadyOpenError())
    if (this.#streams >= this.#options.limits.maxStreams) {
      return sendHostedError(res, new CapacityExhaustedError('streams', this.#options.limits.maxStreams))
    }
    this.#track(session, res, 'stream')
    await session.transport.handleRequest(req, res)
  }

  async #delete(req: IncomingMessage, res: ServerResponse, principal: string): Promise<void> {
    const session = await this.#session(req, res, principal)
    if (session === undefined) return
    await this.end(session.record.id, 'deleted')
    res.writeHead(200).end()
  }

  /** The request's live session, resumed from the store when this process does not hold it; else answered. */
  async #session(req: IncomingMessage, res: ServerResponse, principal: string): Promise<LiveSession | undefined> {
    const id = req.headers['mcp-session-id']
    if (typeof id !== 'string' || id === '') {
      sendHostedError(res, new HostedBadRequestError('Bad Request: MCP-Session-Id header is required'))
      return undefined
    }
    const notFound = (why?: string) => {
      if (why === undefined) sendHostedError(res, new SessionNotFoundError())
      else sendHostedError(res, new SessionTerminatedError(why))
      return undefined
    }
    let session = this.#live.get(id)
    // another principal's session is answered exactly like an unknown one
    if (session !== undefined && session.record.principal !== principal) return notFound()
    if (session === undefined) {
      const record = await this.#options.store.get(id)
      if (record === undefined || record.principal !== principal) return notFound()
      if (ENDED_STATES.has(record.state)) return notFound(`Session ${record.state}`)
      if (this.#now() - record.lastActiveAt >= this.#options.limits.idleMs) {
        await this.#options.store.put({ ...record, state: 'expired' })
        await this.#options.store.dropEvents(id)
        return notFound('Session expired')
      }
      // a session of an earlier process of this edge (a restart): it resumes where it was
      let resuming = this.#resuming.get(id)
      if (resuming === undefined) {
        resuming = this.#open({ ...record }, undefined, true).finally(() => this.#resuming.delete(id))
        this.#resuming.set(id, resuming)
        this.#options.log(`session ${id} resumed from the edge-session store`)
      }
      session = this.#live.get(id) ?? (await resuming)
    }
    const supplied = req.headers['mcp-protocol-version']
    if (supplied !== undefined && supplied !== session.record.protocolVersion) {
      sendHostedError(res, new ProtocolVersionMismatchError(String(supplied), session.record.protocolVersion))
      return undefined
    }
    session.record.lastActiveAt = this.#now()
    session.dirty = true
    return session
  }

  /** Opens a session's transport and Server; a resumed one takes its caller's place here (a new one took it in #initialize). */
  async #open(record: EdgeSessionRecord, capability: string | undefined, resumed: boolean): Promise<LiveSession> {
    const events = await SessionEvents.open(record.id, this.#options.store, this.#events, this.#options.limits.replayWindow)
    const server = await this.#options.createSessionServer({ id: record.id, capability, clientCapabilities: record.clientCapabilities })
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => record.id,
      eventStore: events,
      maxRequestBodySize: this.#options.limits.maxBodyBytes,
    })
    server.registerCapabilities({ experimental: { gateProtocol: { selectedProtocolVersion: record.protocolVersion } } })
    const session: LiveSession = { record, transport, server, events, streams: 0, inFlight: 0, dirty: false }
    this.#live.set(record.id, session)
    if (resumed) this.#callers.add(record)
    if (resumed) resumeSdkSession(transport, server, record)
    transport.onclose = () => {
      if (!this.#stopping && this.#live.get(record.id) === session) void this.end(record.id, 'closed')
    }
    transport.onerror = err => this.#options.log(`session ${record.id}: ${err.message}`)
    await server.connect(transport)
    dispatchByShape(server as never, transport)
    return session
  }

  #track(session: LiveSession, res: ServerResponse, kind: 'request' | 'stream'): void {
    if (kind === 'stream') {
      session.streams++
      this.#streams++
    } else {
      session.inFlight++
      this.#inFlight++
    }
    res.once('close', () => {
      if (kind === 'stream') {
        session.streams--
        this.#streams--
      } else {
        session.inFlight--
        this.#inFlight--
      }
      session.record.lastActiveAt = this.#now()
      session.dirty = true
      if (this.#inFlight === 0) this.#idle?.()
    })
  }

  #refuseDraining(res: ServerResponse): void {
    sendHostedError(res, new EdgeDrainingError())
  }

  /** Ends a live session for good (DELETE, expiry, admin): its record says why, its events go. */
  async end(id: string, state: Extract<HostedSessionState, 'deleted' | 'expired' | 'closed'>): Promise<boolean> {
    const session = this.#live.get(id)
    if (session === undefined) {
      const record = await this.#options.store.get(id)
      if (record === undefined || ENDED_STATES.has(record.state)) return false
      await this.#options.store.put({ ...record, state, lastActiveAt: this.#now() })
      await this.#options.store.dropEvents(id)
      return true
    }
    this.#live.delete(id)
    this.#callers.remove(session.record)
    session.record.state = state
    session.record.lastActiveAt = this.#now()
    await this.#options.store.put(session.record)
    // a batch still pending would put the events back after the drop
    await this.#events.flush()
    await this.#options.store.dropEvents(id)
    await session.server.close().catch(() => {})
    this.#options.log(`session ${id} ${state}`)
    return true
  }

  /** Expires idle sessions, saves when live ones were last active, and forgets long-ended records. */
  async sweep(): Promise<void> {
    const now = this.#now()
    for (const session of [...this.#live.values()]) {
      const busy = session.inFlight > 0 || session.streams > 0
      if (busy) {
        session.record.lastActiveAt = now
        session.dirty = true
      } else if (now - session.record.lastActiveAt >= this.#options.limits.idleMs) {
        await this.end(session.record.id, 'expired')
        continue
      }
      if (session.dirty) {
        session.dirty = false
        await this.#options.store.put(session.record)
      }
    }
    // an ended record stays one idle period, so its client hears why; then it is an unknown id
    await this.#options.store.prune(now - 2 * this.#options.limits.idleMs)
  }

  /** A session as the admin routes show it. */
  async view(id: string): Promise<HostedSessionView | undefined> {
    const live = this.#live.get(id)
    const record = live?.record ?? (await this.#options.store.get(id))
    return record === undefined ? undefined : toView(record, live)
  }

  async list(limit: number): Promise<HostedSessionView[]> {
    return (await this.#options.store.list(limit)).map(record => {
      const live = this.#live.get(record.id)
      return toView(live?.record ?? record, live)
    })
  }

  /**
   * SIGTERM: refuse new requests (503), let requests in flight finish (at most `graceMs`), then close
   * every stream. Sessions stay resumable in the store: the next edge on it takes them over.
   */
  async drain(graceMs: number): Promise<void> {
    this.#draining = true
    for (const session of this.#live.values()) if (!ENDED_STATES.has(session.record.state)) session.record.state = 'draining'
    if (this.#inFlight > 0) {
      await Promise.race([new Promise<void>(resolve => (this.#idle = resolve)), new Promise(resolve => setTimeout(resolve, graceMs).unref())])
    }
    await this.close()
  }

  /** Closes every live session's transport without ending it in the store. */
  async close(): Promise<void> {
    this.#stopping = true
    clearInterval(this.#sweeper)
    await this.#events.flush()
    for (const session of this.#live.values()) {
      if (session.record.state === 'draining') session.record.state = 'ready'
      await this.#options.store.put(session.record).catch(() => {})
      await session.server.close().catch(() => {})
    }
    this.#live.clear()
    this.#callers.clear()
  }
}

function headerText(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
}

function toView(record: EdgeSessionRecord, live: LiveSession | undefined): HostedSessionView {
  const { principal: _principal, clientCapabilities: _capabilities, ...shown } = record
  return { ...shown, live: live !== undefined, openStreams: live?.streams ?? 0, inFlight: live?.inFlight ?? 0 }
}

// A restarted edge takes a session over: the SDK has no public way to bind a transport and a Server
// to a session initialized by another process, so the two fields its initialize sets are set here
// from the stored record (checked by the restart test in sidecar/src/cli/mcp-serve-http.test.ts).
function resumeSdkSession(transport: StreamableHTTPServerTransport, server: Server, record: EdgeSessionRecord): void {
  const web = (transport as unknown as { _webStandardTransport: { _initialized: boolean; sessionId?: string } })._webStandardTransport
  web._initialized = true
  web.sessionId = record.id
  const state = server as unknown as { _clientCapabilities?: unknown; _clientVersion?: unknown }
  state._clientCapabilities = record.clientCapabilities
  state._clientVersion = record.clientInfo
}
