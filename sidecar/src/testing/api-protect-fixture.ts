// `gate api protect` as the end-to-end tests drive it: the real process (node sidecar/dist/cli/main.js)
// in front of a real node:http upstream (upstream-app.ts), receipts in a SQLite store under t.testdir();
// each answered request's finalized receipt read back from the store and verified twice, by the
// process's own POST /gate/verify and offline against the /gate/live key.
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { request } from 'undici'
import { verifyHttpReceipt, type CapabilityToken, type HttpReceipt } from '@gate/sdk'
import { PETS_SPEC_YAML } from './pets-spec.js'
import { startUpstreamApp, type UpstreamApp } from './upstream-app.js'

const MAIN = new URL('../cli/main.js', import.meta.url).pathname
export const CONTROL_TOKEN = 'control-token-for-tests'
export const MiB = 1024 * 1024

export interface ProtectProcess {
  url: string
  child: ChildProcess
  storePath: string | undefined
  output(): string
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>
  exited: Promise<number | null>
}

export interface ProtectRun {
  code: number | null
  stdout: string
  stderr: string
}

export function spawnProtect(args: string[]): { child: ChildProcess; out: { stdout: string; stderr: string }; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [MAIN, 'api', 'protect', ...args], {
    env: { ...process.env, GATE_CONTROL_TOKEN: CONTROL_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const out = { stdout: '', stderr: '' }
  child.stdout?.on('data', (c: Buffer) => (out.stdout += c.toString()))
  child.stderr?.on('data', (c: Buffer) => (out.stderr += c.toString()))
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  return { child, out, exited }
}

/** Starts the process and resolves with its bound URL once the listening line is printed. */
export async function startProtect(t: Test, args: string[]): Promise<ProtectProcess> {
  const { child, out, exited } = spawnProtect([...args, '--listen', '127.0.0.1:0'])
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      // the last startup line (spec 01: route count, upstream URL and bound address)
      const m = /protecting \S+ with \d+ routes on (http:\/\/[^\s"]+)/.exec(out.stdout)
      if (m !== null) {
        child.stdout?.off('data', onData)
        resolve(m[1] as string)
      }
    }
    child.stdout?.on('data', onData)
    void exited.then(code => reject(new Error(`gate exited with ${code} before listening:\n${out.stdout}\n${out.stderr}`)))
  })
  let stopped: Promise<number | null> | undefined
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      return exited
    })()
    return stopped
  }
  t.teardown(stop)
  const storeIndex = args.indexOf('--receipt-store')
  return { url, child, storePath: storeIndex < 0 ? undefined : args[storeIndex + 1], output: () => out.stdout + out.stderr, stop, exited }
}

/** Runs the command to completion (startup failures). */
export async function runProtect(args: string[]): Promise<ProtectRun> {
  const { out, exited } = spawnProtect([...args, '--listen', '127.0.0.1:0'])
  const code = await exited
  return { code, ...out }
}

/**
 * Reads a receipt's stored JSON from the SQLite receipt store the process writes (read-only; WAL lets
 * it read while the process runs). The table is found by its columns, not its name.
 */
export async function readStoredReceipt(storePath: string, receiptId: string): Promise<HttpReceipt | undefined> {
  const sqlite3 = (await import('sqlite3')).default
  const db = await new Promise<InstanceType<typeof sqlite3.Database>>((resolve, reject) => {
    const d = new sqlite3.Database(storePath, sqlite3.OPEN_READONLY, err => (err === null ? resolve(d) : reject(err)))
  })
  const all = <T>(sql: string, params: unknown[] = []) =>
    new Promise<T[]>((resolve, reject) => db.all(sql, params, (err: Error | null, rows: T[]) => (err === null ? resolve(rows) : reject(err))))
  try {
    for (const { name } of await all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")) {
      const columns = (await all<{ name: string }>(`PRAGMA table_info("${name}")`)).map(c => c.name)
      const idColumn = columns.find(c => c === 'receipt_id')
      const jsonColumn = columns.find(c => c === 'http_json' || c === 'json' || c === 'receipt_json')
      if (idColumn === undefined || jsonColumn === undefined) continue
      const rows = await all<Record<string, string>>(`SELECT "${jsonColumn}" AS j FROM "${name}" WHERE "${idColumn}" = ?`, [receiptId])
      if (rows[0] !== undefined) return JSON.parse(rows[0].j as string) as HttpReceipt
    }
    return undefined
  } finally {
    db.close()
  }
}

/** One fixture directory per test (t.testdir() may be called once): the spec file and a store path. */
export function fixture(t: Test, text = PETS_SPEC_YAML): { spec: string; store: string } {
  const dir = t.testdir({ 'openapi.yaml': text })
  return { spec: join(dir, 'openapi.yaml'), store: join(dir, 'receipts.db') }
}

export async function startUpstream(t: Test, options?: Parameters<typeof startUpstreamApp>[0]): Promise<UpstreamApp> {
  const app = await startUpstreamApp(options)
  t.teardown(() => app.close())
  return app
}

export async function issueToken(gate: ProtectProcess, toolNames: string[]): Promise<{ token: CapabilityToken; header: string }> {
  const r = await request(`${gate.url}/v1/capabilities/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      subjectPublicKey: 'ab'.repeat(32),
      scope: { grants: toolNames.map(tool_name => ({ server_id: 'http', tool_name })) },
      ttlSeconds: 3600,
    }),
  })
  const body = (await r.body.json()) as { capability: CapabilityToken }
  if (r.statusCode !== 200) throw new Error(`issue failed: ${r.statusCode} ${JSON.stringify(body)}`)
  return { token: body.capability, header: Buffer.from(JSON.stringify(body.capability)).toString('base64url') }
}

/** Revokes through the control route; resolves with its status. */
export async function revokeToken(gate: ProtectProcess, capabilityId: string): Promise<number> {
  const r = await request(`${gate.url}/v1/revocations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ capabilityId }),
  })
  await r.body.dump()
  return r.statusCode
}

export async function kernelKey(gate: ProtectProcess): Promise<string> {
  const r = await request(`${gate.url}/gate/live`)
  return ((await r.body.json()) as { kernel_key: string }).kernel_key
}

/**
 * The finalized receipt named by X-Gate-Receipt-Id: stored, carrying the answered status, scope final
 * and the decision receipt id, verified by the process and offline.
 */
export async function checkFinalReceipt(
  t: Test,
  gate: ProtectProcess,
  receiptId: string | string[] | undefined,
  expected: { status: number; verdict: 'allow' | 'deny' | 'incomplete' | 'cancel' },
): Promise<HttpReceipt | undefined> {
  if (typeof receiptId !== 'string') {
    t.fail('X-Gate-Receipt-Id is missing')
    return undefined
  }
  const receipt = await readStoredReceipt(gate.storePath as string, receiptId)
  if (receipt === undefined) {
    t.fail(`receipt ${receiptId} is not in the store`)
    return undefined
  }
  t.equal(receipt.id, receiptId)
  t.equal(receipt.response_status, expected.status, 'the finalized receipt carries the answered status')
  t.equal(receipt.verdict.verdict, expected.verdict)
  t.equal(receipt.metadata?.gate_http_status_scope, 'final', 'scope final')
  const decisionId = receipt.metadata?.gate_decision_receipt_id
  t.match(decisionId, /^[0-9a-f]{64}$/, 'names its decision receipt')
  const decision = await readStoredReceipt(gate.storePath as string, decisionId as string)
  t.equal(decision?.metadata?.gate_http_status_scope, 'decision', 'the decision receipt is stored too')
  t.equal(decision?.request_id, receipt.request_id)

  const verified = await request(`${gate.url}/gate/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(receipt) })
  const v = (await verified.body.json()) as { ok: boolean; signer_trusted: boolean; authorized: boolean }
  t.equal(verified.statusCode, 200)
  t.ok(v.ok && v.signer_trusted, 'verifies at /gate/verify')
  t.equal(v.authorized, expected.verdict === 'allow')
  t.ok(verifyHttpReceipt(receipt, { trustedKeys: [await kernelKey(gate)] }).ok, 'verifies offline against the /gate/live kernel_key')
  return receipt
}

/** A request with a body, over node:http so an early answer is read even while the body is still going out. */
export function sendLarge(url: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-length': String(body.length), 'content-type': 'application/octet-stream' } })
    req.on('response', res => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      res.on('error', reject)
    })
    // the proxy answers an oversized body before reading it all, then reads and drops the rest: the
    // client can send every byte and read the answer (no broken pipe)
    req.on('error', reject)
    req.end(body)
  })
}
