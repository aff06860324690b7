// Issue #37 benchmark: where a receipt's core form (spec 03 gate.receipt.v1) is best made, now that
// nothing may be signed over a stored receipt unverified. Either the writer signs the core form beside
// the HTTP receipt (one more Ed25519 signature and a larger row on every write), or trust-control makes
// it on first read and verifies the stored HTTP receipt first (one more verification, only for receipts
// that are read). Measured per receipt, in this process:
//   - CPU: signing as the writer does today, and with the core form too; a first read as it was (parse,
//     convert, sign) and as it is (parse, verify, convert, sign), in interleaved rounds
//   - the row: bytes of the HTTP receipt and of its core form
//   - the store: group commit of pre-signed rows (concurrency 50, WAL) with and without the core form,
//     CPU of the whole process (the sqlite3 thread included) and bytes written
// No pass/fail target: it informs the choice written down in docs/receipts.md.
//
//   npx tsc -b bench && node bench/dist/run.js core-form      (BENCH_CORE_FORM_ROWS, default 40,000)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSigner, sha256Hex, signHttpReceiptJson, toCoreReceiptJson, uuidv7, type HttpReceipt } from '@gate/sdk'
import { exampleReceiptBody } from '@gate/sdk/testing'
import { toCoreJson } from '@gate/trust'
import { openReceiptStore } from '../../../sidecar/dist/stores/index.js'
import { createReceiptRow, type ReceiptRow } from '@gate/trust'
import { measureRates, printTable } from '../measure.js'
import { writtenBytes } from '../proc-stats.js'

const ROWS = Number(process.env.BENCH_CORE_FORM_ROWS ?? 40_000)
const CONCURRENCY = 50

export async function run(): Promise<{ ok: boolean }> {
  const signer = createSigner({ secret: new Uint8Array(32).fill(37) })
  const trusted = [signer.publicKey]
  const body = exampleReceiptBody({ request_id: uuidv7(), content_hash: sha256Hex('content') })
  const signed = signHttpReceiptJson(body, signer)
  const row = { receiptId: signed.receipt.id, httpJson: signed.json }
  if (!('json' in toCoreJson(row, signer, trusted))) throw new Error('the sample receipt does not convert')

  const [write, writeWithCore, readUnverified, readVerified] = measureRates([
    () => signHttpReceiptJson(body, signer),
    () => toCoreReceiptJson(signHttpReceiptJson(body, signer).receipt, signer),
    () => toCoreReceiptJson(JSON.parse(signed.json) as HttpReceipt, signer),
    () => toCoreJson(row, signer, trusted),
  ]) as [number, number, number, number]
  const micros = (rate: number) => 1e6 / rate
  const coreBytes = toCoreReceiptJson(signed.receipt, signer).length
  const cpu = [
    { path: 'write: sign the HTTP receipt (today)', 'µs/receipt': micros(write), 'extra µs': '' },
    { path: 'write: sign the HTTP receipt and its core form', 'µs/receipt': micros(writeWithCore), 'extra µs': micros(writeWithCore) - micros(write) },
    { path: 'first read: parse, convert, sign (unverified)', 'µs/receipt': micros(readUnverified), 'extra µs': '' },
    { path: 'first read: parse, verify, convert, sign (chosen)', 'µs/receipt': micros(readVerified), 'extra µs': micros(readVerified) - micros(readUnverified) },
  ]
  printTable('core form: CPU per receipt (Ed25519, node:crypto, interleaved rounds)', cpu)
  printTable('core form: the row', [
    { form: 'HttpReceipt (http_json)', bytes: signed.json.length },
    { form: 'core receipt (core_json)', bytes: coreBytes },
  ])

  const dir = mkdtempSync(join(tmpdir(), 'gate-core-form-'))
  const stores: Record<string, string | number>[] = []
  try {
    for (const withCore of [false, true]) stores.push(await groupCommit(join(dir, `store-${withCore}.db`), withCore, signer))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  printTable(`core form: group commit of ${ROWS.toLocaleString('en-US')} pre-signed rows, concurrency ${CONCURRENCY} (CPU: whole process)`, stores)
  const extraWrite = micros(writeWithCore) - micros(write) + Number(stores[1]!['CPU µs/row']) - Number(stores[0]!['CPU µs/row'])
  process.stdout.write(
    `core form at write: +${extraWrite.toFixed(0)} µs CPU and +${coreBytes} bytes on every receipt written; ` +
      `verified first read: +${(micros(readVerified) - micros(readUnverified)).toFixed(0)} µs once per receipt read (docs/receipts.md)\n`,
  )
  return { ok: true }
}

async function groupCommit(path: string, withCore: boolean, signer: ReturnType<typeof createSigner>): Promise<Record<string, string | number>> {
  const rows: ReceiptRow[] = Array.from({ length: ROWS }, (_, n) => {
    const { receipt, json } = signHttpReceiptJson(exampleReceiptBody({ request_id: uuidv7(), timestamp: 1_760_000_000 + n, content_hash: sha256Hex(`content-${n}`) }), signer)
    return createReceiptRow(receipt, json, { coreJson: withCore ? toCoreReceiptJson(receipt, signer) : null })
  })
  const store = await openReceiptStore(path)
  try {
    const writtenBefore = writtenBytes()
    const cpuBefore = process.cpuUsage()
    const started = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < rows.length) await store.log.append(rows[next++]!)
      }),
    )
    const elapsed = performance.now() - started
    const cpu = process.cpuUsage(cpuBefore)
    const written = writtenBytes()
    return {
      rows: withCore ? 'HTTP receipt and core form' : 'HTTP receipt only (today)',
      'rows/s': (ROWS * 1000) / elapsed,
      'CPU µs/row': (cpu.user + cpu.system) / ROWS,
      'KB written/row': written === undefined || writtenBefore === undefined ? '' : (written - writtenBefore) / ROWS / 1024,
    }
  } finally {
    await store.close()
  }
}
