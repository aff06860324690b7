// The CPU budget of one gated request on the app's side, step by step: `npm run bench -- sdk-steps`.
// The request is GET /pets?limit=2 with a bearer token, allowed by a real `gate sidecar` (durable
// store), asked over its Unix socket and over loopback TCP. Each step is timed two ways:
//   alone     many iterations of that step by itself, on inputs captured from a real exchange (hot
//             caches: its cost with nothing in between); CPU time from process.cpuUsage()
//   in place  the steps run one request at a time in the order decide() runs them, against the
//             sidecar, each timed where it runs (caches as cold as a request leaves them); the median
//             over the requests, from performance.now() for the synchronous steps and process CPU
//             time for the exchange (which waits)
// and then the whole: decide() of the real core per verifyReceipts mode, and the transports alone.
// BENCH_STEP_ITERATIONS (alone, default 20,000), BENCH_STEP_REQUESTS (in place, default 3,000) and
// BENCH_ROUNDS (interleaved rounds, default 3; the median is printed) size it.
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  buildGateHttpRequest,
  checkHttpReceipt,
  checkSignature,
  createFetchTransport,
  createGateCore,
  createNodeTransport,
  extractCallerIdentity,
  parseQuery,
  readGateHeaders,
  readJson,
  resolveGateOptions,
  sha256Hex,
  utf8,
  type GateContext,
  type GateHttpRequest,
  type GateRequestInput,
  type SidecarEvaluation,
  type SidecarTransport,
} from '@gate/sdk'
import { createUndiciTransport, PETS_SPEC_YAML, receiptBindingProblem, selectForwardHeaders, toOutcome } from '@gate/sdk/middleware-testing'
import { getValidator, validate } from '@gate/schemas'
import { median, printTable } from '../measure.js'
import { startSidecar, THIS_ROOT, writeSpec, type Listening } from './bench-processes.js'

const ITERATIONS = Number(process.env.BENCH_STEP_ITERATIONS ?? 20_000)
const REQUESTS = Number(process.env.BENCH_STEP_REQUESTS ?? 3_000)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
const RESPONSE_SCHEMA = 'gate.http.evaluate_response.v1'
const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json', accept: 'application/json' })
const FORWARD = resolveGateOptions({}, {}).forwardHeaders
const HEADERS = { host: '127.0.0.1:3000', 'user-agent': 'bench', accept: 'application/json', authorization: 'Bearer bench-token-0123456789abcdef' }
const INPUT: GateRequestInput = { method: 'GET', path: '/pets', rawQuery: 'limit=2', headers: HEADERS, rawHeaders: Object.entries(HEADERS).flat(), body: null, routePattern: '/pets' }

/** The steps of decide() for this request, in order (names as printed). */
const STEPS = [
  'query map (parseQuery)',
  'Gate headers (readGateHeaders)',
  'caller identity (bearer: SHA-256, identity)',
  'forwarded headers',
  'GateHttpRequest (id, body hash, time)',
  'serialize (JSON.stringify)',
  'transport: send, receive',
  'read answer and receipt text (readJson)',
  'schema check (evaluate response)',
  'receipt binding checks',
  'receipt id + signature (over the received bytes)',
  'outcome (context, headers)',
] as const
type Step = (typeof STEPS)[number]

/** CPU µs per call of `fn`, over `n` calls (after n/10 warm-up calls). */
function cpuPerCall(fn: () => unknown, n = ITERATIONS): number {
  for (let i = 0; i < n / 10; i++) fn()
  const start = process.cpuUsage()
  for (let i = 0; i < n; i++) fn()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / n
}

/** CPU µs per exchange, `n` exchanges one after the other. */
async function cpuPerExchange(send: () => Promise<unknown>, n = Math.max(200, REQUESTS / 2)): Promise<number> {
  for (let i = 0; i < n / 10; i++) await send()
  const start = process.cpuUsage()
  for (let i = 0; i < n; i++) await send()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / n
}

interface Fixture {
  request: GateHttpRequest
  requestText: string
  answerText: string
  answer: SidecarEvaluation
  receiptText: string
  kernelKey: string
}

/** One real exchange with the sidecar, kept as the input of the steps timed alone. */
async function captureFixture(transport: SidecarTransport): Promise<Fixture> {
  const request = buildRequest()
  const requestText = JSON.stringify(request)
  const res = await transport.send('POST', '/gate/evaluate', JSON_HEADERS, requestText)
  const live = JSON.parse((await transport.send('GET', '/gate/live', { accept: 'application/json' })).text) as { kernel_key: string }
  const read = readJson(res.text, { rawMemberOf: 'receipt' })
  const answer = read.value as SidecarEvaluation
  const receiptText = read.rawMember
  if (res.status !== 200 || answer.verdict.verdict !== 'allow' || receiptText === undefined) throw new Error(`the sidecar did not allow the bench request: ${res.status} ${res.text.slice(0, 200)}`)
  return { request, requestText, answerText: res.text, answer, receiptText, kernelKey: live.kernel_key }
}

function buildRequest(): GateHttpRequest {
  const parsed = parseQuery(INPUT.rawQuery)
  return buildGateHttpRequest({ method: 'GET', path: INPUT.path, routePattern: '/pets', caller: extractCallerIdentity(INPUT.headers, null), body: null, query: parsed.query, headers: selectForwardHeaders(INPUT.headers, FORWARD) })
}

function context(request: GateHttpRequest, answer: SidecarEvaluation): GateContext {
  return Object.freeze({ requestId: request.request_id, caller: request.caller, verdict: answer.verdict, receipt: answer.receipt, evidence: answer.evidence, failOpen: null, executionNonce: null })
}

/** Each step alone, µs of CPU per call. */
function stepsAlone(f: Fixture): Record<Step, number> {
  const validator = getValidator(RESPONSE_SCHEMA)
  const caller = extractCallerIdentity(INPUT.headers, null)
  return {
    'query map (parseQuery)': cpuPerCall(() => parseQuery(INPUT.rawQuery)),
    'Gate headers (readGateHeaders)': cpuPerCall(() => readGateHeaders(INPUT.headers, INPUT.rawHeaders)),
    'caller identity (bearer: SHA-256, identity)': cpuPerCall(() => extractCallerIdentity(INPUT.headers, null)),
    'forwarded headers': cpuPerCall(() => selectForwardHeaders(INPUT.headers, FORWARD)),
    'GateHttpRequest (id, body hash, time)': cpuPerCall(() => buildGateHttpRequest({ method: 'GET', path: '/pets', routePattern: '/pets', caller, body: null, query: f.request.query })),
    'serialize (JSON.stringify)': cpuPerCall(() => JSON.stringify(f.request)),
    'transport: send, receive': NaN, // the exchange waits on the sidecar: see the transports table
    'read answer and receipt text (readJson)': cpuPerCall(() => readJson(f.answerText, { rawMemberOf: 'receipt' })),
    'schema check (evaluate response)': cpuPerCall(() => validator(f.answer)),
    'receipt binding checks': cpuPerCall(() => receiptBindingProblem(f.answer, { request: f.request, nonceId: undefined, nonceBoundRequestId: undefined })),
    'receipt id + signature (over the received bytes)': cpuPerCall(() => checkHttpReceipt(f.answer.receipt, { trustedKeys: [f.kernelKey], receiptText: f.receiptText }), ITERATIONS / 4),
    'outcome (context, headers)': cpuPerCall(() => toOutcome(f.answer, context(f.request, f.answer), null, null)),
  }
}

/** The parts of the receipt check, alone, interleaved in five blocks each (the differences are small). */
function receiptCheckParts(f: Fixture): Record<string, number> {
  const { signature: _signature, ...body } = f.answer.receipt
  const signed = utf8(canonicalBodyText(f.receiptText))
  const parts: Record<string, () => unknown> = {
    'receipt id + signature, re-canonicalized': () => checkHttpReceipt(f.answer.receipt, { trustedKeys: [f.kernelKey] }),
    'receipt id + signature, over the received bytes': () => checkHttpReceipt(f.answer.receipt, { trustedKeys: [f.kernelKey], receiptText: f.receiptText }),
    'Ed25519 verification alone (node:crypto)': () => checkSignature(f.kernelKey, signed, f.answer.receipt.signature),
    'SHA-256 of the receipt body (the id)': () => sha256Hex(JSON.stringify(body)),
  }
  const blocks = Object.fromEntries(Object.keys(parts).map(k => [k, [] as number[]]))
  for (let block = 0; block < 5; block++) for (const [name, fn] of Object.entries(parts)) blocks[name]!.push(cpuPerCall(fn, ITERATIONS / 20))
  return Object.fromEntries(Object.entries(blocks).map(([name, xs]) => [name, median(xs)]))
}

/** The receipt text less its signature member (the bytes that were signed). */
function canonicalBodyText(receiptText: string): string {
  return receiptText.replace(/,"signature":"[^"]*"/, '')
}

/** Runs `REQUESTS` requests through the steps in order; the median per step (µs). */
async function stepsInPlace(transport: SidecarTransport, kernelKey: string): Promise<Record<Step, number>> {
  const samples = Object.fromEntries(STEPS.map(s => [s, [] as number[]])) as Record<Step, number[]>
  const validator = getValidator(RESPONSE_SCHEMA)
  for (let i = 0; i < REQUESTS; i++) {
    let t = performance.now()
    const lap = (step: Step) => {
      const now = performance.now()
      samples[step].push((now - t) * 1000)
      t = now
    }
    const parsed = parseQuery(INPUT.rawQuery)
    lap('query map (parseQuery)')
    readGateHeaders(INPUT.headers, INPUT.rawHeaders, parsed.capability)
    lap('Gate headers (readGateHeaders)')
    const caller = extractCallerIdentity(INPUT.headers, null)
    lap('caller identity (bearer: SHA-256, identity)')
    const forwarded = selectForwardHeaders(INPUT.headers, FORWARD)
    lap('forwarded headers')
    const request = buildGateHttpRequest({ method: 'GET', path: INPUT.path, routePattern: '/pets', caller, body: null, query: parsed.query, headers: forwarded })
    lap('GateHttpRequest (id, body hash, time)')
    const text = JSON.stringify(request)
    lap('serialize (JSON.stringify)')
    const cpu = process.cpuUsage()
    const res = await transport.send('POST', '/gate/evaluate', JSON_HEADERS, text)
    const used = process.cpuUsage(cpu)
    samples['transport: send, receive'].push(used.user + used.system)
    t = performance.now()
    const read = readJson(res.text, { rawMemberOf: 'receipt' })
    const answer = read.value as SidecarEvaluation
    const receiptText = read.rawMember
    lap('read answer and receipt text (readJson)')
    if (!validator(answer)) throw new Error('the answer fails its schema')
    lap('schema check (evaluate response)')
    const problem = receiptBindingProblem(answer, { request, nonceId: undefined, nonceBoundRequestId: undefined })
    lap('receipt binding checks')
    const check = checkHttpReceipt(answer.receipt, { trustedKeys: [kernelKey], receiptText })
    lap('receipt id + signature (over the received bytes)')
    toOutcome(answer, context(request, answer), null, null)
    lap('outcome (context, headers)')
    if (problem !== undefined || !check.response.ok) throw new Error(`the receipt did not check: ${problem ?? check.detail}`)
  }
  return Object.fromEntries(STEPS.map(s => [s, s === 'transport: send, receive' ? mean(samples[s]) : median(samples[s])])) as Record<Step, number>
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length
}

/** The real core's decide(), CPU µs per request, for one sidecar URL and verifyReceipts mode. */
async function decideCpu(sidecarUrl: string, verifyReceipts: 'local' | 'sidecar' | 'off'): Promise<number> {
  const core = createGateCore({ sidecarUrl, verifyReceipts })
  try {
    return await cpuPerExchange(async () => {
      const outcome = await core.decide(INPUT)
      if (!outcome.allowed) throw new Error(`decide() refused: ${JSON.stringify(outcome)}`)
    }, REQUESTS)
  } finally {
    await core.close()
  }
}

/** The median of each key over rounds of `measure`. */
async function medianOfRounds<K extends string>(measure: () => Promise<Record<K, number>> | Record<K, number>): Promise<Record<K, number>> {
  const rounds: Record<K, number>[] = []
  for (let r = 0; r < ROUNDS; r++) rounds.push(await measure())
  const keys = Object.keys(rounds[0] as object) as K[]
  return Object.fromEntries(keys.map(k => [k, median(rounds.map(x => x[k]).filter(Number.isFinite))])) as Record<K, number>
}

const us = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '' : v < 10 ? v.toFixed(2) : v.toFixed(1))

export async function run(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-sdk-steps-'))
  const spec = writeSpec(dir, PETS_SPEC_YAML)
  const sidecars: Listening[] = []
  try {
    const tcp = await startSidecar(THIS_ROOT, '127.0.0.1:0', dir, spec, 'tcp')
    sidecars.push(tcp)
    const unix = await startSidecar(THIS_ROOT, `unix:${join(dir, 'gate.sock')}`, dir, spec, 'unix')
    sidecars.push(unix)
    const transports = {
      'socket transport, Unix socket': createNodeTransport(resolveGateOptions({ sidecarUrl: unix.url }, {})),
      'socket transport, loopback TCP': createNodeTransport(resolveGateOptions({ sidecarUrl: tcp.url }, {})),
      'undici Pool, loopback TCP (before)': createUndiciTransport(tcp.url, { timeoutMs: 5000, connections: 16 }),
      'fetch, loopback TCP (the edge)': createFetchTransport(tcp.url, { timeoutMs: 5000 }),
    }
    try {
      const fixture = await captureFixture(transports['socket transport, Unix socket'])
      validate(RESPONSE_SCHEMA, fixture.answer)
      const alone = await medianOfRounds(() => stepsAlone(fixture))
      const parts = await medianOfRounds(() => receiptCheckParts(fixture))
      const inPlaceUnix = await medianOfRounds(() => stepsInPlace(transports['socket transport, Unix socket'], fixture.kernelKey))
      const tcpKey = (JSON.parse((await transports['socket transport, loopback TCP'].send('GET', '/gate/live', {})).text) as { kernel_key: string }).kernel_key
      const inPlaceTcp = await medianOfRounds(() => stepsInPlace(transports['socket transport, loopback TCP'], tcpKey))
      const exchanges = await medianOfRounds(async () => {
        const out: Record<string, number> = {}
        for (const [name, transport] of Object.entries(transports)) out[name] = await cpuPerExchange(() => transport.send('POST', '/gate/evaluate', JSON_HEADERS, fixture.requestText))
        return out
      })
      const decide = await medianOfRounds(async () => {
        const out: Record<string, number> = {}
        for (const [label, url] of [['Unix socket', unix.url], ['loopback TCP', tcp.url]] as const) {
          for (const mode of ['local', 'sidecar', 'off'] as const) out[`${label}, verifyReceipts '${mode}'`] = await decideCpu(url, mode)
        }
        return out
      })

      const total = (r: Record<Step, number>) => STEPS.reduce((sum, s) => sum + (Number.isFinite(r[s]) ? r[s] : 0), 0)
      printTable(`CPU budget of one gated request on the app's side (GET /pets?limit=2, bearer caller, allowed; µs; median of ${ROUNDS} rounds)`, [
        ...STEPS.map(step => ({ step, alone: us(alone[step]), 'in place, Unix socket': us(inPlaceUnix[step]), 'in place, TCP': us(inPlaceTcp[step]) })),
        { step: 'sum of the steps', alone: '', 'in place, Unix socket': us(total(inPlaceUnix)), 'in place, TCP': us(total(inPlaceTcp)) },
      ])
      printTable('the receipt check in parts, alone (µs)', Object.entries(parts).map(([part, v]) => ({ part, 'CPU µs': us(v) })))
      printTable('one evaluate exchange, alone: this process\'s CPU per exchange (µs)', Object.entries(exchanges).map(([transport, v]) => ({ transport, 'CPU µs': us(v) })))
      printTable(`the real core's decide(), whole: this process's CPU per request (µs), ${REQUESTS} requests one after another`, Object.entries(decide).map(([what, v]) => ({ what, 'CPU µs': us(v) })))
    } finally {
      for (const transport of Object.values(transports)) await transport.close()
    }
  } finally {
    for (const s of sidecars) await s.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  process.stdout.write(`load average ${loadavg().map(l => l.toFixed(1)).join(' ')}\n`)
  // a measurement, not a target: it always "meets" it
  return { ok: true }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run()
