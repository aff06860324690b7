// Browser test of the receipt explorer (/ui): a real headless Chromium (puppeteer-core) against the
// real `gate trust serve` over a receipt store a real `gate sidecar` filled with known decisions. It
// filters, pages, opens a receipt and sees its signature verified in the browser, then sees a receipt
// tampered in the store marked not verified; receipts signed with a hybrid key are verified in the browser
// too (both halves: the ML-DSA-65 one with the modules trust-control serves). The screenshot is kept in
// test-artifacts/.
import t, { type Test } from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ANONYMOUS_CALLER, uuidv7 } from '@gate/sdk'
import type { Page } from 'puppeteer-core'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { findChromium, launchChromium } from '../testing/chromium.js'

const TOKEN = 'explorer-service-token-' + 'z'.repeat(16)
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url))
const chromium = findChromium()

// The DOM members the page functions read (this package compiles without the DOM library).
interface DomElement {
  dataset: Record<string, string | undefined>
  value: string
  disabled: boolean
  textContent: string | null
  children: ArrayLike<{ textContent: string | null }>
}

function request(method: string, path: string) {
  return { request_id: uuidv7(), method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) }
}

/** Runs `sql` with `params` on the SQLite file (the service is stopped meanwhile). */
async function runSql(path: string, sql: string, params: unknown[]): Promise<number> {
  const sqlite3 = (await import('sqlite3')).default
  const db = await new Promise<InstanceType<typeof sqlite3.Database>>((resolve, reject) => {
    const d = new sqlite3.Database(path, err => (err === null ? resolve(d) : reject(err)))
  })
  try {
    return await new Promise<number>((resolve, reject) =>
      db.run(sql, params, function (this: { changes: number }, err: Error | null) {
        if (err === null) resolve(this.changes)
        else reject(err)
      }),
    )
  } finally {
    await new Promise<void>(resolve => db.close(() => resolve()))
  }
}

/** A Chromium page, closed at teardown, and the script errors it reports. */
async function openPage(t: Test): Promise<{ page: Page; pageErrors: string[] }> {
  const browser = await launchChromium(chromium!)
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const pageErrors: string[] = []
  page.on('pageerror', err => pageErrors.push(String(err)))
  return { page, pageErrors }
}

async function settled(page: Page): Promise<void> {
  await page.waitForFunction("document.body.dataset.busy === 'false'")
}

async function rows(page: Page): Promise<{ id: string; verification: string; outcome: string }[]> {
  return page.$$eval('#receipts tbody tr', trs =>
    trs.map(tr => ({ id: (tr as unknown as DomElement).dataset.id ?? '', verification: (tr as unknown as DomElement).dataset.verification ?? '', outcome: (tr as unknown as DomElement).children[1]?.textContent ?? '' })),
  )
}

async function applyFilters(page: Page, values: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(values)) {
    await page.$eval(`#filters [name="${name}"]`, (el, v) => ((el as unknown as DomElement).value = v), value)
  }
  await page.click('#filters button[type="submit"]')
  await settled(page)
}

t.test('the explorer lists, filters, pages and verifies receipts in the browser', { skip: chromium === undefined ? 'no Chromium installed (apt-get install chromium, or set GATE_CHROMIUM)' : false }, async t => {
  // known decisions: 4 allowed reads, 3 denied creations
  const { seed, spec, db } = await gateFiles(t)
  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  for (let i = 0; i < 4; i++) t.equal((await call(`${sidecar.url}/gate/evaluate`, { body: request('GET', `/pets/${i}`) })).status, 200)
  for (let i = 0; i < 3; i++) t.equal((await call(`${sidecar.url}/gate/evaluate`, { body: request('POST', '/pets') })).status, 200)
  t.equal(await sidecar.stop(), 0)

  const serveArgs = ['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', seed]
  // the first read stores each receipt's core form; stopping flushes those writes
  const first = await spawnGate(serveArgs, { env: { GATE_CONTROL_TOKEN: TOKEN } })
  const listed = await call(`${first.url}/v1/receipts/query?limit=200`, { headers: { authorization: `Bearer ${TOKEN}` } })
  const served = (listed.body as { receipts: { id: string; decision: { verdict: string } }[] }).receipts
  t.equal(served.length, 7)
  t.equal(await first.stop(), 0)
  // tamper one stored denial: its reason no longer matches its id and signature
  const victim = served.find(r => r.decision.verdict === 'deny')!
  const changed = await runSql(db, "UPDATE receipts SET core_json = replace(core_json, 'capability required', 'capability granted') WHERE core_json LIKE ?", [`%"id":"${victim.id}"%`])
  t.equal(changed, 1, 'one stored core receipt tampered')

  const serve = await spawnGate(serveArgs, { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => serve.stop('SIGKILL'))
  const { page, pageErrors } = await openPage(t)
  await page.setViewport({ width: 1280, height: 900 })

  await page.goto(`${serve.url}/ui`)
  await settled(page)
  t.match(await page.$eval('#error', el => el.textContent), /answered 401/, 'without a token the receipts route refuses')
  await page.type('#token', TOKEN)
  await page.click('#token-form button')
  await page.waitForFunction("document.querySelectorAll('#receipts tbody tr').length === 7")
  await settled(page)
  const all = await rows(page)
  t.equal(all.filter(r => r.verification === 'verified').length, 6, 'six receipts verified in the browser')
  t.same(all.filter(r => r.verification === 'not_verified').map(r => r.id), [victim.id], 'the tampered one is not')
  t.match(await page.$eval('#signer-status', el => el.textContent), /1 trusted authority key/)

  await applyFilters(page, { outcome: 'deny' })
  t.same((await rows(page)).map(r => r.outcome), ['deny', 'deny', 'deny'], 'filtered to denials')
  t.match(await page.$eval('#page-info', el => el.textContent), /3 matching/)

  await applyFilters(page, { outcome: '', limit: '3' })
  const page1 = await rows(page)
  t.equal(page1.length, 3)
  t.match(await page.$eval('#page-info', el => el.textContent), /page 1, 3 shown, 7 matching/)
  await page.click('#next-page')
  await settled(page)
  const page2 = await rows(page)
  t.equal(page2.length, 3)
  await page.click('#next-page')
  await settled(page)
  const page3 = await rows(page)
  t.equal(page3.length, 1)
  t.equal(await page.$eval('#next-page', el => (el as unknown as DomElement).disabled), true, 'no page after the last')
  t.same(new Set([...page1, ...page2, ...page3].map(r => r.id)), new Set(all.map(r => r.id)), 'the pages cover every receipt once')
  await page.click('#prev-page')
  await settled(page)
  t.same((await rows(page)).map(r => r.id), page2.map(r => r.id), 'previous goes back one page')

  await applyFilters(page, { limit: '50' })
  const good = all.find(r => r.verification === 'verified' && r.outcome === 'deny')!
  await page.click(`#receipts tbody tr[data-id="${good.id}"]`)
  t.equal(await page.$eval('#detail-verification', el => (el as unknown as DomElement).dataset.state), 'verified')
  const words = await page.$eval('#detail-words', el => el.textContent ?? '')
  t.match(words, new RegExp(`receipt ${good.id}`))
  t.match(words, /verdict: +deny by CapabilityGuard: capability required/)
  t.match(words, /route: +POST \/pets \(request /)
  t.match(words, /- CapabilityGuard: failed/)
  t.match(words, /signature: +verified/)

  await page.click(`#receipts tbody tr[data-id="${victim.id}"]`)
  t.equal(await page.$eval('#detail-verification', el => (el as unknown as DomElement).dataset.state), 'not_verified')
  t.match(await page.$eval('#detail-verification', el => el.textContent), /NOT VERIFIED: id is not the hash of the receipt body/)
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: `${ARTIFACTS}receipt-explorer.png`, fullPage: true })

  await page.click('nav button[data-view="analytics"]')
  await settled(page)
  t.equal(await page.$$eval('#chart-time rect', els => els.length) > 0, true, 'decisions over time drawn')
  t.match(await page.$eval('#chart-routes', el => el.textContent), /POST \/pets3/, 'top denied route with its count')
  await page.screenshot({ path: `${ARTIFACTS}receipt-explorer-analytics.png`, fullPage: true })

  await page.click('nav button[data-view="report"]')
  await settled(page)
  t.match(await page.$eval('#report-summary', el => el.textContent), /Receipts7Allowed4Denied3/)
  t.same(pageErrors, [], 'no script error on the page')
})

t.test('receipts signed with a hybrid key are verified in the browser, both halves', { skip: chromium === undefined ? 'no Chromium installed' : false }, async t => {
  const { dir, spec, db } = await gateFiles(t)
  const keyFile = join(dir, 'hybrid.key')
  t.equal((await runGate(['keygen', '--algorithm', 'p256+mldsa65', keyFile])).code, 0, 'gate keygen')
  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', keyFile], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.equal((await call(`${sidecar.url}/gate/evaluate`, { body: request('GET', '/pets/1') })).status, 200)
  t.equal((await call(`${sidecar.url}/gate/evaluate`, { body: request('POST', '/pets') })).status, 200)
  t.equal(await sidecar.stop(), 0)

  const serve = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', keyFile], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => serve.stop('SIGKILL'))
  const { page, pageErrors } = await openPage(t)
  const offOrigin: string[] = []
  page.on('request', r => {
    // data: URLs are the browser's own (a date input's icon), never a fetch
    if (!r.url().startsWith(serve.url) && !r.url().startsWith('data:')) offOrigin.push(r.url())
  })
  await page.goto(`${serve.url}/ui`)
  await settled(page)
  await page.type('#token', TOKEN)
  await page.click('#token-form button')
  await page.waitForFunction("document.querySelectorAll('#receipts tbody tr').length === 2")
  await settled(page)
  const all = await rows(page)
  t.same(all.map(r => r.verification), ['verified', 'verified'], 'both hybrid receipts verified in the browser')
  await page.click(`#receipts tbody tr[data-id="${all[0]!.id}"]`)
  t.equal(await page.$eval('#detail-verification', el => (el as unknown as DomElement).dataset.state), 'verified')
  t.match(await page.$eval('#detail-verification', el => el.textContent), /P-256 \+ ML-DSA-65 hybrid signature \(both halves\) check/)
  t.same(offOrigin, [], 'nothing loaded from another origin')
  t.same(pageErrors, [], 'no script error on the page')
})

t.test('the explorer page and scripts are served with a same-origin-only CSP', async t => {
  const { seed, db } = await gateFiles(t)
  const serve = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => serve.stop('SIGKILL'))
  const page = await call(`${serve.url}/ui`)
  t.equal(page.status, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.headers['content-security-policy'], /default-src 'none'; script-src 'self'/)
  t.match(page.text, /<script type="module" src="\/ui\/explorer\.js">/)
  const script = await call(`${serve.url}/ui/receipt-verify.js`)
  t.equal(script.status, 200)
  t.match(script.headers['content-type'], /^text\/javascript/)
  const verifier = await call(`${serve.url}/ui/noble-post-quantum-ml-dsa.js`)
  t.equal(verifier.status, 200, 'the ML-DSA-65 verifier is served beside the page')
  t.match(verifier.headers['content-security-policy'], /default-src 'none'/)
  t.notMatch(verifier.text, /^import[^;]*from ['"]@noble/m, 'its imports name the served modules, not packages')
  t.equal((await call(`${serve.url}/ui/noble-hashes-sha2.js`)).status, 404, 'only the verifier\'s modules are served')
  t.equal((await call(`${serve.url}/ui/..%2fpackage.json`)).status, 404, 'only the named assets are served')
  t.equal((await call(`${serve.url}/ui/nothing.js`)).status, 404)
  t.equal((await call(`${serve.url}/ui`, { method: 'POST', body: {} })).status, 405)
})
