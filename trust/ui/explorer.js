// The receipt explorer (docs/observability.md): reads the trust-control routes with the caller's bearer
// token, lists receipts with the spec 03 query filters and cursor paging, explains one in words with its
// signature checked here in the browser, and charts the analytics. Every value from the server is set as
// text, never as markup.
import { refusedByServer, verifyReceipt } from './receipt-verify.js'
import { describeReceipt, isoTime, shortReason } from './receipt-words.js'
import { drawBars, drawTimeChart } from './charts.js'

const TOKEN_KEY = 'gate-explorer-token'
const $ = id => document.getElementById(id)
const state = { token: sessionStorage.getItem(TOKEN_KEY) ?? '', trustedKeys: [], cursors: [], cursor: undefined, nextCursor: null, receipts: new Map() }

function setBusy(busy) {
  document.body.dataset.busy = busy ? 'true' : 'false'
}

async function getJson(path) {
  const headers = state.token === '' ? {} : { authorization: `Bearer ${state.token}` }
  const res = await fetch(path, { headers, cache: 'no-store' })
  const text = await res.text()
  let body
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  if (!res.ok) throw new Error(`${path.split('?')[0]} answered ${res.status}: ${body?.message ?? body?.error ?? text.slice(0, 200)}`)
  return body
}

function showError(err) {
  $('error').textContent = err === undefined ? '' : err.message
}

// The authority's trusted keys: GET /health carries them without a token; /v1/authority with an admin one.
async function loadTrustedKeys() {
  for (const path of ['/health', '/v1/authority']) {
    try {
      const body = await getJson(path)
      const keys = body.authority?.trustedPublicKeys ?? body.trustedPublicKeys
      if (Array.isArray(keys)) {
        state.trustedKeys = keys
        $('signer-status').textContent = `${keys.length} trusted authority key(s)`
        return
      }
    } catch {
      // try the next source
    }
  }
  state.trustedKeys = []
  $('signer-status').textContent = 'trusted authority keys unavailable: no receipt can be marked verified'
}

function readFilters() {
  const params = new URLSearchParams()
  for (const [name, value] of new FormData($('filters'))) {
    const text = String(value).trim()
    if (text === '') continue
    if (name === 'since' || name === 'until') params.set(name, String(Math.floor(Date.parse(`${text}Z`) / 1000)))
    else params.set(name, text)
  }
  return params
}

function cell(text, className) {
  const td = document.createElement('td')
  td.textContent = text
  if (className) td.className = className
  return td
}

const VERIFICATION_TEXT = { verified: 'verified', not_verified: 'NOT VERIFIED', unchecked: 'not checked' }
const VERIFICATION_CLASS = { verified: 'verified', not_verified: 'not-verified', unchecked: 'muted' }
const HTTP_OUTCOME = { allow: 'allow', deny: 'deny', cancel: 'cancelled', incomplete: 'incomplete' }

async function loadReceipts() {
  setBusy(true)
  showError(undefined)
  try {
    const params = readFilters()
    if (state.cursor !== undefined) params.set('cursor', String(state.cursor))
    const body = await getJson(`/v1/receipts/query?${params}`)
    state.nextCursor = body.nextCursor
    state.receipts.clear()
    const rows = await Promise.all(
      body.receipts.map(async (served, i) => {
        // a stored text that was not JSON is served as null: shown, never verified
        const receipt = served !== null && typeof served === 'object' ? served : { id: `unreadable-${i}` }
        const verification = refusedByServer(served, body.unverifiedReceipts) ?? (await verifyReceipt(served, state.trustedKeys))
        state.receipts.set(receipt.id, { receipt, verification })
        const tr = document.createElement('tr')
        tr.dataset.id = receipt.id
        tr.dataset.verification = verification.state
        // an HttpReceipt (served as stored) carries its verdict and route instead of decision and tool_name
        const outcome = receipt.decision?.verdict ?? HTTP_OUTCOME[receipt.verdict?.verdict] ?? 'none'
        tr.append(
          cell(isoTime(receipt.timestamp)),
          cell(outcome, outcome),
          cell(receipt.tool_name ?? (receipt.method === undefined ? '' : `${receipt.method} ${receipt.route_pattern}`)),
          cell(shortReason(receipt)),
          cell(receipt.capability_id || 'none'),
          cell(VERIFICATION_TEXT[verification.state], `signature ${VERIFICATION_CLASS[verification.state]}`),
        )
        tr.addEventListener('click', () => showDetail(receipt.id))
        return tr
      }),
    )
    $('receipts').tBodies[0].replaceChildren(...rows)
    $('page-info').textContent = `page ${state.cursors.length + 1}, ${rows.length} shown, ${body.totalCount} matching`
    $('prev-page').disabled = state.cursors.length === 0
    $('next-page').disabled = body.nextCursor === null
  } catch (err) {
    showError(err)
  } finally {
    setBusy(false)
  }
}

function showDetail(id) {
  const entry = state.receipts.get(id)
  if (entry === undefined) return
  const { receipt, verification } = entry
  $('detail').hidden = false
  $('detail-id').textContent = id
  const status = $('detail-verification')
  status.textContent = `${VERIFICATION_TEXT[verification.state]}: ${verification.detail}`
  status.className = VERIFICATION_CLASS[verification.state]
  status.dataset.state = verification.state
  $('detail-words').textContent = describeReceipt(receipt, verification)
  $('detail-json').textContent = JSON.stringify(receipt, null, 2)
}

async function loadAnalytics() {
  setBusy(true)
  showError(undefined)
  try {
    const bucket = new FormData($('analytics-form')).get('timeBucket')
    const analytics = await getJson(`/v1/receipts/analytics?timeBucket=${bucket}&groupLimit=200`)
    drawTimeChart($('chart-time'), analytics.byTime, row => isoTime(row.bucketStart))
    const routes = analytics.byTool
      .filter(row => row.metrics.denyCount > 0)
      .sort((a, b) => b.metrics.denyCount - a.metrics.denyCount)
      .slice(0, 10)
      .map(row => ({ label: row.toolName, count: row.metrics.denyCount }))
    drawBars($('chart-routes'), routes, 'No denials.')
    const denials = await getJson('/v1/receipts/query?outcome=deny&limit=200')
    const reasons = new Map()
    for (const r of denials.receipts) {
      const key = shortReason(r) || 'unknown'
      reasons.set(key, (reasons.get(key) ?? 0) + 1)
    }
    const top = [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([label, count]) => ({ label, count }))
    drawBars($('chart-reasons'), top, 'No denials.')
  } catch (err) {
    showError(err)
  } finally {
    setBusy(false)
  }
}

async function loadReport() {
  setBusy(true)
  showError(undefined)
  try {
    const report = await getJson('/v1/reports/operator')
    const s = report.activity.summary
    const facts = [
      ['Generated', isoTime(report.generatedAt)],
      ['Receipts', s.totalReceipts],
      ['Allowed', s.allowCount],
      ['Denied', s.denyCount],
      ['Cancelled', s.cancelledCount],
      ['Incomplete', s.incompleteCount],
      ['Compliance rate', s.complianceRate === undefined ? 'n/a' : `${(s.complianceRate * 100).toFixed(1)} %`],
      ['Cost charged', s.totalCostCharged],
    ]
    $('report-summary').replaceChildren(
      ...facts.flatMap(([k, v]) => {
        const dt = document.createElement('dt')
        dt.textContent = k
        const dd = document.createElement('dd')
        dd.textContent = String(v)
        return [dt, dd]
      }),
    )
    $('report-json').textContent = JSON.stringify(report, null, 2)
  } catch (err) {
    showError(err)
  } finally {
    setBusy(false)
  }
}

const VIEWS = { receipts: loadReceipts, analytics: loadAnalytics, report: loadReport }

function showView(name) {
  for (const button of document.querySelectorAll('nav button')) button.classList.toggle('active', button.dataset.view === name)
  for (const view of Object.keys(VIEWS)) $(`view-${view}`).hidden = view !== name
  return VIEWS[name]()
}

function main() {
  $('token').value = state.token
  $('token-form').addEventListener('submit', event => {
    event.preventDefault()
    state.token = $('token').value.trim()
    sessionStorage.setItem(TOKEN_KEY, state.token)
    void loadTrustedKeys().then(() => showView('receipts'))
  })
  $('filters').addEventListener('submit', event => {
    event.preventDefault()
    state.cursors = []
    state.cursor = undefined
    void loadReceipts()
  })
  $('first-page').addEventListener('click', () => {
    state.cursors = []
    state.cursor = undefined
    void loadReceipts()
  })
  $('next-page').addEventListener('click', () => {
    if (state.nextCursor === null) return
    state.cursors.push(state.cursor)
    state.cursor = state.nextCursor
    void loadReceipts()
  })
  $('prev-page').addEventListener('click', () => {
    if (state.cursors.length === 0) return
    state.cursor = state.cursors.pop()
    void loadReceipts()
  })
  $('analytics-form').addEventListener('submit', event => {
    event.preventDefault()
    void loadAnalytics()
  })
  $('report-refresh').addEventListener('click', () => void loadReport())
  for (const button of document.querySelectorAll('nav button')) button.addEventListener('click', () => void showView(button.dataset.view))
  void loadTrustedKeys().then(() => loadReceipts())
}

main()
