#!/usr/bin/env node
// `gate-conformance`: runs the suite against a sidecar URL, or against sidecars it starts for itself
// (--start-sidecar), and prints a table (or JSON). Exit codes: 0 conformant, 1 a required check failed,
// 2 usage error.
import { isGateError } from '@gate/sdk'
import { parseCliArgs, USAGE } from './cli-args.js'
import { DEFAULT_SPEC_TEXT } from './default-spec.js'
import { startRecordingUpstream } from './fakes/recording-upstream.js'
import { loadIssuerSeed } from './issuer-seed.js'
import { formatJson, formatTable } from './report.js'
import { CHECKS, runConformance } from './run-conformance.js'
import { loadGateSdkCore } from './sdk-under-test.js'
import { runAgainstStartedSidecars } from './start-sidecar.js'
import { runToolCallConformance } from './tool-calls/run-tool-calls.js'
import { runWireConformance } from './wire/run-wire.js'

async function main(argv: readonly string[]): Promise<number> {
  let command
  try {
    command = parseCliArgs(argv, process.env)
  } catch (err) {
    process.stderr.write(`gate-conformance: ${(err as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  switch (command.kind) {
    case 'help':
      process.stdout.write(USAGE + '\n')
      return 0
    case 'print-default-spec':
      process.stdout.write(DEFAULT_SPEC_TEXT)
      return 0
    case 'list':
      process.stdout.write(command.json ? JSON.stringify(CHECKS, null, 2) + '\n' : CHECKS.map(c => `${c.id}\t${c.required ? 'required' : 'advisory'}\t${c.specRef}\t${c.description}`).join('\n') + '\n')
      return 0
    case 'run-mcp': {
      const report = await runToolCallConformance({ command: command.command, only: command.only })
      process.stdout.write(command.json ? formatJson(report) : formatTable(report))
      return report.ok ? 0 : 1
    }
    case 'run-wire': {
      const report = await runWireConformance({ target: command.target, only: command.only, timeoutMs: command.requestTimeoutMs })
      process.stdout.write(command.json ? formatJson(report) : formatTable(report))
      return report.ok ? 0 : 1
    }
    case 'run':
      break
  }
  let sdkUnderTest = null
  let sdkNote = 'skipped with --no-sdk'
  if (command.sdk) {
    const loaded = await loadGateSdkCore()
    if ('sdk' in loaded) sdkUnderTest = loaded.sdk
    else sdkNote = `no SDK under test: ${loaded.missing}`
  }
  let proxyUpstream = null
  try {
    const issuer = command.issuerSeedFile === undefined ? null : await loadIssuerSeed(command.issuerSeedFile)
    const common = { spec: command.spec, only: command.only, sdkUnderTest, sdkNote, strictNonces: command.strictNonces, requestTimeoutMs: command.requestTimeoutMs, issuer }
    // listening before the first check: the proxy under test connects on its first forward
    if (command.proxyUpstream !== undefined) proxyUpstream = await startRecordingUpstream(command.proxyUpstream)
    const report =
      command.sidecarUrl === null
        ? await runAgainstStartedSidecars({ ...common, log: line => process.stderr.write(`gate-conformance: ${line}\n`) })
        : await runConformance({ ...common, sidecarUrl: command.sidecarUrl, controlToken: command.controlToken, proxyUpstream })
    process.stdout.write(command.json ? formatJson(report) : formatTable(report))
    return report.ok ? 0 : 1
  } catch (err) {
    if (isGateError(err) && err.code === 'gate_invalid_config') {
      process.stderr.write(`gate-conformance: ${err.message}\n`)
      return 2
    }
    throw err
  } finally {
    await proxyUpstream?.close()
  }
}

main(process.argv.slice(2)).then(
  code => {
    process.exitCode = code
  },
  err => {
    process.stderr.write(`gate-conformance: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`)
    process.exitCode = 2
  },
)
