// Issue 37, point 2: `gate receipt audit` reports every tamper in one run. A store written only by
// real `gate` processes (testing/audited-store.ts: tool calls, the proxy's finalized receipts, costs,
// capabilities, tenants, stored core forms, 1,700 bulk receipts) is copied and each copy tampered with
// through the sqlite3 package; the real `gate receipt audit` must report every change, fold runs into
// ranges, and call a row whose filter columns disagree with its untouched signed receipt altered.
import t from 'tap'
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import { join } from 'node:path'
import type * as Sqlite3 from 'sqlite3'
import { buildAuditedStore } from '../testing/audited-store.js'
import { GATE_MAIN, runGate } from '../testing/spawn-gate.js'

interface Finding {
  kind: string
  index: number | null
  lastIndex: number | null
  count: number
  detail: string
}
interface Report {
  ok: boolean
  firstBadIndex: number | null
  receipts: number
  findings: Finding[]
}

const BULK = 1700

const sqlite3 = ((await import('sqlite3')) as unknown as { default: typeof Sqlite3 }).default

/** Runs statements on a store file with the sqlite3 package and returns the rows of the last query. */
async function sql<T>(path: string, statements: string[], query?: string): Promise<T[]> {
  const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
    const opened: Sqlite3.Database = new sqlite3.Database(path, err => (err ? reject(err) : resolve(opened)))
  })
  try {
    for (const statement of statements) await new Promise<void>((resolve, reject) => db.exec(statement, err => (err ? reject(err) : resolve())))
    if (query === undefined) return []
    return await new Promise<T[]>((resolve, reject) => db.all(query, (err, rows) => (err ? reject(err) : resolve(rows as T[]))))
  } finally {
    await new Promise<void>(resolve => db.close(() => resolve()))
  }
}

t.test('gate receipt audit reports every tamper of a store real processes wrote', async t => {
  const store = await buildAuditedStore(t, BULK)
  const one = async <T>(query: string) => (await sql<T>(store.db, [], query))[0]!
  const total = (await one<{ n: number }>('SELECT count(*) AS n FROM receipts')).n
  let copies = 0
  const tampered = async (statements: string[]) => {
    const path = join(store.dir, `tampered-${++copies}.db`)
    copyFileSync(store.db, path)
    if (existsSync(`${store.db}-wal`)) copyFileSync(`${store.db}-wal`, `${path}-wal`)
    await sql(path, statements)
    return path
  }
  const audit = async (db: string, extra: string[] = []) => {
    const r = await runGate(['receipt', 'audit', '--receipt-db', db, '--trusted-key', store.key, ...extra], { timeoutMs: 120_000 })
    t.equal(r.stderr, '', 'nothing on stderr')
    return r
  }
  const auditJson = async (db: string) => {
    const r = await audit(db, ['--json'])
    return { code: r.code, report: JSON.parse(r.stdout) as Report }
  }

  t.test('the untouched store audits ok: tool calls, finalized receipts, costs and core forms included', async t => {
    const kinds = await one<Record<string, number>>(`SELECT
      sum(http_json IS NULL) AS coreOnly, sum(http_json IS NULL AND subject_key IS NOT NULL) AS coreWithSubject,
      sum(kind = 'final') AS final, sum(http_json IS NOT NULL AND core_json IS NOT NULL) AS bothForms,
      sum(cost_units > 0) AS charged, sum(attempted_cost_units IS NOT NULL) AS refused,
      sum(http_json IS NOT NULL AND subject_key IS NOT NULL) AS httpWithSubject, sum(tenant IS NOT NULL) AS withTenant FROM receipts`)
    t.match(kinds, { coreOnly: 3, coreWithSubject: 1, final: 2, charged: 2, refused: 1, httpWithSubject: 3 })
    t.ok(kinds.bothForms! >= 10 && kinds.withTenant! > 1000, JSON.stringify(kinds))
    const clean = await auditJson(store.db)
    t.equal(clean.code, 0, JSON.stringify(clean.report.findings))
    t.match(clean.report, { ok: true, firstBadIndex: null, receipts: total, findings: [] })
  })

  t.test('a deletion and an alteration 1,000 rows later are both reported', async t => {
    const db = await tampered(['DELETE FROM receipts WHERE seq = 300', `UPDATE receipts SET http_json = replace(http_json, '"response_status":200', '"response_status":201') WHERE seq = 1300`])
    const { code, report } = await auditJson(db)
    t.equal(code, 1)
    t.match(report, { ok: false, firstBadIndex: 299, receipts: total - 1 })
    t.match(report.findings, [
      { kind: 'missing_row', index: 299, lastIndex: 299, count: 1, detail: /no receipt at seq 300/ },
      { kind: 'altered_row', index: 1299, lastIndex: 1299, count: 1, detail: /seq 1300: receipt_id: / },
    ])
    t.equal(report.findings.length, 2, 'nothing else: the tree goes on past the deleted row with the leaf it recorded')
    const text = await audit(db)
    t.equal(text.code, 1)
    t.match(text.stdout, /^FAIL: .*\n(?:.*\n)*first bad index: 299\n {2}missing_row at index 299: no receipt at seq 300 .*\n {2}altered_row at index 1299: seq 1300: /)
  })

  t.test('a row inserted mid-log prints a range, not a line per row', async t => {
    // every row from seq 200 on moves one seq up, and a copy of the receipt at seq 30 takes seq 200
    const db = await tampered(['UPDATE receipts SET seq = -seq WHERE seq >= 200', 'UPDATE receipts SET seq = 1 - seq WHERE seq < 0', 'INSERT INTO receipts SELECT 200, receipt_id, id_bucket, id_prefix, timestamp, request_id, method, route_pattern, tool_server, tool_name, outcome, capability_id, tenant, subject_key, cost_units, cost_currency, attempted_cost_units, kind, decision_receipt_id, http_json, core_json FROM receipts WHERE seq = 30'])
    const { code, report } = await auditJson(db)
    t.equal(code, 1)
    const moved = report.findings.filter(f => f.kind === 'reordered_row')
    t.match(moved, [
      { index: 199, count: 1, detail: /seq 200 holds receipt [0-9a-f]{64}, which the tree recorded at index 29/ },
      { index: 200, lastIndex: total - 1, count: total - 200, detail: /recorded 1 index before its own/ },
    ])
    t.equal(moved.length, 2)
    t.ok(report.findings.filter(f => f.kind === 'root_mismatch').length === 1, 'the checkpoints after it fail as one finding')
    const text = await audit(db)
    const lines = text.stdout.trimEnd().split('\n')
    t.ok(lines.length < 10, `a handful of lines, not ${total - 200}:\n${text.stdout}`)
    t.equal(lines.filter(l => l.includes('reordered_row')).length, 2)
    t.match(text.stdout, `reordered_row at indexes 200–${total - 1} (${(total - 200).toLocaleString('en-US')} rows): seq 201 holds receipt`)
  })

  t.test('filter columns rewritten under an untouched signed receipt are each found', async t => {
    const seqOf = async (where: string) => (await one<{ seq: number }>(`SELECT seq FROM receipts WHERE ${where} ORDER BY seq LIMIT 1`)).seq
    const bulk = async (tenant: string) => (await sql<{ seq: number }>(store.db, [], `SELECT seq FROM receipts WHERE route_pattern = '/pets' AND method = 'GET' AND ${tenant} AND seq < 1000 ORDER BY seq LIMIT 12`)).map(r => r.seq)
    const [acme, untenanted] = [await bulk("tenant = 'acme'"), await bulk('tenant IS NULL')]
    const charged = await seqOf('cost_units > 0')
    const refused = await seqOf('attempted_cost_units IS NOT NULL')
    const httpSubject = await seqOf(`http_json IS NOT NULL AND subject_key IS NOT NULL AND seq NOT IN (${charged}, ${refused})`)
    const final = await seqOf("kind = 'final'")
    const coreDenied = await seqOf("http_json IS NULL AND outcome = 'deny'")
    const coreSubject = await seqOf('http_json IS NULL AND subject_key IS NOT NULL')
    const coreAllowed = await seqOf("http_json IS NULL AND outcome = 'allow' AND subject_key IS NULL")
    const formRows = (await sql<{ seq: number }>(store.db, [], `SELECT seq FROM receipts WHERE http_json IS NOT NULL AND core_json IS NOT NULL AND seq NOT IN (${[final, charged, refused, httpSubject, ...acme, ...untenanted].join(',')}) ORDER BY seq LIMIT 4`)).map(r => r.seq)
    // not neighbours: two neighbouring rows with a bad core form would be one run
    const [otherCore, forgedCore] = [formRows[1]!, formRows[3]!]
    const cases: [number, string[], RegExp][] = [
      // the example: the columns queries filter on, rewritten
      [acme[0]!, ["outcome = 'deny'", "capability_id = 'cap_forged'"], /the outcome column is "deny", the signed receipt says "allow"; the capability_id column is "cap_forged", the signed receipt says null/],
      [acme[1]!, ['timestamp = timestamp - 3600'], /the timestamp column is \d+, the signed receipt says \d+/],
      [acme[2]!, ["tenant = 'initech'"], /the tenant column is "initech", the signed receipt says "acme"/],
      [acme[3]!, ['tenant = NULL'], /the tenant column is null, the signed receipt says "acme"/],
      [untenanted[0]!, ["tenant = 'acme'"], /the tenant column is "acme", the signed receipt says null/],
      [acme[4]!, ["tool_name = 'GET /admin'"], /the tool_name column is "GET \/admin", the signed receipt says "GET \/pets"/],
      [acme[5]!, ["route_pattern = '/admin'", "method = 'DELETE'"], /the method column is "DELETE", the signed receipt says "GET"; the route_pattern column is "\/admin"/],
      [acme[6]!, ["tool_server = 'files'"], /the tool_server column is "files", the signed receipt says "http"/],
      [acme[7]!, ["request_id = 'forged-request'"], /the request_id column is "forged-request"/],
      [acme[8]!, [`subject_key = '${'cd'.repeat(32)}'`], /the subject_key column is "(cd){32}", the signed receipt says null/],
      [httpSubject, ['subject_key = NULL'], /the subject_key column is null, the signed receipt says "[0-9a-f]{64}"/],
      [charged, ['cost_units = 1', "cost_currency = 'EUR'"], /the cost_units column is 1, the signed receipt says \d+; the cost_currency column is "EUR", the signed receipt says "USD"/],
      [refused, ['attempted_cost_units = NULL'], /the attempted_cost_units column is null, the signed receipt says 501/],
      [final, ["kind = 'decision'", 'decision_receipt_id = NULL'], /the kind column is "decision", the signed receipt says "final"; the decision_receipt_id column is null, the signed receipt says "[0-9a-f]{64}"/],
      // core-only rows (tool calls)
      [coreDenied, ["outcome = 'allow'"], /the outcome column is "allow", the signed receipt says "deny"/],
      [coreSubject, ['subject_key = NULL', "capability_id = 'cap-other'"], /the capability_id column is "cap-other", the signed receipt says "cap-audited-tool"; the subject_key column is null, the signed receipt says "(ab){32}"/],
      [coreAllowed, ["tenant = 'acme'", "tool_name = 'write_note'", "route_pattern = 'write_note'"], /the route_pattern column is "write_note", the signed receipt says "echo"; the tool_name column is "write_note", the signed receipt says "echo"; the tenant column is "acme", the signed receipt says null/],
      // the core forms stored beside HTTP receipts, as trust-control serves them
      [otherCore, [`core_json = (SELECT core_json FROM receipts WHERE seq = ${formRows[0]})`], /the stored core form is not the core form of the signed receipt/],
      [forgedCore, [`core_json = replace(core_json, '"decision":{', '"decision":{"x":1,')`], /the stored core form fails at receipt_id/],
    ]
    const statements = cases.map(([seq, sets]) => `UPDATE receipts SET ${sets.join(', ')} WHERE seq = ${seq}`)
    // a whole range rewritten alike: one finding for the run
    const range = 1500
    statements.push(`UPDATE receipts SET outcome = 'deny' WHERE seq BETWEEN ${range} AND ${range + 49}`)
    const before = await sql<{ seq: number; http_json: string | null }>(store.db, [], 'SELECT seq, http_json FROM receipts ORDER BY seq')
    const db = await tampered(statements)
    const after = await sql<{ seq: number; http_json: string | null }>(db, [], 'SELECT seq, http_json FROM receipts ORDER BY seq')
    t.same(after, before, 'every signed HTTP receipt is untouched')

    const { code, report } = await auditJson(db)
    t.equal(code, 1)
    for (const [seq, sets, detail] of cases) {
      const found = report.findings.find(f => f.index === seq - 1)
      t.match(found, { kind: 'altered_row', count: 1, detail }, `seq ${seq}: ${sets.join(', ')}`)
    }
    t.match(
      report.findings.find(f => f.index === range - 1),
      { kind: 'altered_row', lastIndex: range + 48, count: 50, detail: /the outcome column is "deny", the signed receipt says "allow"; every row of the run: columns outcome/ },
    )
    t.equal(report.findings.length, cases.length + 1, 'no other finding: the leaves are untouched')
    t.equal(new Set(cases.map(c => c[0])).size, cases.length, 'each case a row of its own')
  })

  t.test('usage errors exit 2', async t => {
    t.equal((await runGate(['receipt', 'audit'])).code, 2, '--receipt-db is required')
    t.equal((await runGate(['receipt', 'audit', '--receipt-db', store.db, '--no-such-flag'])).code, 2)
  })

  t.test('a reader that goes away early (| head -1) ends the output quietly', async t => {
    const deleted = await tampered(['DELETE FROM receipts WHERE seq BETWEEN 10 AND 12'])
    const withClosedStdout = async (args: string[]) => {
      const child = spawn(process.execPath, [GATE_MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
      // the read end closes before anything is written: every write meets EPIPE
      child.stdout.destroy()
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
      const [code] = (await once(child, 'close')) as [number | null]
      return { code, stderr }
    }
    t.same(await withClosedStdout(['receipt', 'audit', '--receipt-db', deleted, '--trusted-key', store.key]), { code: 1, stderr: '' }, 'audit: exit 1 for its finding, no stack trace')
    t.same(await withClosedStdout(['receipt', 'audit', '--receipt-db', deleted, '--trusted-key', store.key, '--json']), { code: 1, stderr: '' })
    t.same(await withClosedStdout(['receipt', 'list', '--receipt-db', store.db, '--admin-all', '--limit', '200']), { code: 0, stderr: 'next cursor: 200\n' }, 'list: its cursor line, nothing else')
    const receipts = join(store.dir, 'receipts.jsonl')
    writeFileSync(receipts, (await sql<{ json: string }>(store.db, [], 'SELECT http_json AS json FROM receipts WHERE http_json IS NOT NULL LIMIT 200')).map(r => r.json).join('\n') + '\n')
    t.same(await withClosedStdout(['receipt', 'verify', receipts, '--trusted-key', store.key]), { code: 0, stderr: '200 of 200 receipt(s) verified\n' }, 'verify: its summary line, nothing else')
  })
})
