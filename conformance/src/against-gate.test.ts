// CI: the suite against the real thing. Starts `gate sidecar` (with a control token) and `gate api
// protect` (in front of the suite's recording upstream, with the same document) and asserts every check,
// required or advisory, passes against both (the proxy.* checks against `gate api protect` only); then both again with `--strict-nonces` for the nonces.* checks (and
// `--nonce-ttl-secs 2`, so that nonces.expired-denied runs instead of skipping). Known Gate bugs are
// listed below with the check that finds them; they are reported as TODO (visible in every run) instead
// of failing CI, and the list is the place to remove them from once fixed.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { createSigner, generateSecret, type Signer } from '@gate/sdk'
import { CHECKS, DEFAULT_SPEC_TEXT, gateReceiptFile, loadGateSdkCore, runConformance, type Report, type SdkUnderTest } from './index.js'
import { startRecordingUpstream, type RecordingUpstream } from './fakes/recording-upstream.js'
import { isGateBuilt, runGate, spawnGate } from './testing/spawn-gate.js'

const CONTROL_TOKEN = 'conformance-e2e-control-token'
const NONCE_CHECK_IDS = CHECKS.filter(c => c.needs?.includes('strict-nonces')).map(c => c.id)
const PROXY_CHECK_IDS = CHECKS.filter(c => c.needs?.includes('proxy')).map(c => c.id)

/** Checks that fail against Gate today, with the bug each one finds. */
const KNOWN_GATE_BUGS: Record<string, string> = {}

/**
 * Every check ran and passed, except those for the other nonce mode (run in their own test) and, for a
 * sidecar that is not a proxy, the proxy.* checks.
 */
function assertConformant(t: Test, report: Report, strictNonces: boolean, proxy: boolean): void {
  for (const r of report.results) {
    if (NONCE_CHECK_IDS.includes(r.id) !== strictNonces) continue
    if (PROXY_CHECK_IDS.includes(r.id) && !proxy) {
      t.equal(r.result, 'SKIP', `${r.id} is skipped: gate sidecar is not a proxy`)
      continue
    }
    const known = KNOWN_GATE_BUGS[r.id]
    if (r.result === 'SKIP') {
      t.fail(`${r.id} was skipped: ${r.detail ?? ''}`)
    } else if (known !== undefined) {
      t.equal(r.result, 'PASS', `${r.id}`, { todo: `known Gate bug: ${known}` })
    } else {
      // advisory checks too: they are optional for other implementations, not for Gate's own
      t.equal(r.result, 'PASS', `${r.id}${r.required ? '' : ' (advisory)'}${r.detail === null ? '' : `: ${r.detail}`}`)
    }
  }
}

async function prepare(t: Test): Promise<{ dir: string; specPath: string; seedPath: string; issuer: Signer; sdk: { sdkUnderTest: SdkUnderTest } | { sdkNote: string } }> {
  const dir = t.testdir()
  const specPath = join(dir, 'pets.json')
  await writeFile(specPath, DEFAULT_SPEC_TEXT)
  // the authority seed Gate runs with is the issuer key the delegation and token-field checks sign with
  const seed = generateSecret('ed25519')
  const seedPath = join(dir, 'authority-seed')
  await writeFile(seedPath, Buffer.from(seed).toString('hex') + '\n', { mode: 0o600 })
  const issuer = createSigner({ secret: seed })
  const loaded = await loadGateSdkCore()
  if (!('sdk' in loaded)) t.comment(`sdk.* checks skipped: ${loaded.missing}`)
  return { dir, specPath, seedPath, issuer, sdk: 'sdk' in loaded ? { sdkUnderTest: loaded.sdk } : { sdkNote: loaded.missing } }
}

const notBuilt = isGateBuilt() ? false : 'sidecar/dist/cli/main.js is not built (run `npx tsc -b` at the repository root)'

async function protectUnavailable(): Promise<string | false> {
  if (notBuilt !== false) return notBuilt
  const help = await runGate(['api', 'protect', '--help'])
  if (help.code === 0 && help.output.includes('gate api protect')) return false
  return `\`gate api protect\` is not available yet (exit ${help.code}): ${help.output.slice(0, 200)}`
}

async function startUpstream(t: Test): Promise<RecordingUpstream> {
  const upstream = await startRecordingUpstream()
  t.teardown(() => upstream.close())
  return upstream
}

for (const strictNonces of [false, true]) {
  // 2 s, not 1: a nonce issued late in a second must still live a whole second for the other checks' retries
  const flags = strictNonces ? ['--strict-nonces', '--nonce-ttl-secs', '2'] : []
  const mode = strictNonces ? ' with --strict-nonces (the nonces.* checks)' : ''

  t.test(`gate sidecar${mode} passes every check`, { skip: notBuilt }, async t => {
    const { dir, specPath, seedPath, issuer, sdk } = await prepare(t)
    const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', specPath, '--receipt-store', join(dir, 'sidecar.db'), '--authority-seed-file', seedPath, ...flags], { GATE_CONTROL_TOKEN: CONTROL_TOKEN })
    t.teardown(() => gate.stop())
    // the test owns the store: the checks that alter a stored receipt run too
    const receiptStore = gateReceiptFile(join(dir, 'sidecar.db'))
    assertConformant(t, await runConformance({ sidecarUrl: gate.url, controlToken: CONTROL_TOKEN, spec: specPath, strictNonces, issuer, receiptStore, ...sdk }), strictNonces, false)
  })

  t.test(`gate api protect${mode} passes every check`, { skip: await protectUnavailable() }, async t => {
    const { dir, specPath, seedPath, issuer, sdk } = await prepare(t)
    const upstream = await startUpstream(t)
    const gate = await spawnGate(
      ['api', 'protect', '--upstream', upstream.url, '--listen', '127.0.0.1:0', '--spec', specPath, '--receipt-store', join(dir, 'protect.db'), '--authority-seed-file', seedPath, ...flags],
      { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
    )
    t.teardown(() => gate.stop())
    const receiptStore = gateReceiptFile(join(dir, 'protect.db'))
    assertConformant(t, await runConformance({ sidecarUrl: gate.url, controlToken: CONTROL_TOKEN, spec: specPath, strictNonces, issuer, proxyUpstream: upstream, receiptStore, ...sdk }), strictNonces, true)
  })
}
