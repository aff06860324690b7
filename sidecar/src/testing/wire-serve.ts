// Starts the real `gate wire serve` for end-to-end tests and waits for its wire and control-route
// lines (never a sleep); makes the certificates of a mutual-TLS test with the openssl command.
import type { Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { GATE_MAIN } from './spawn-gate.js'

// the control routes' token (given, so no token file is made in the working directory)
const TEST_CONTROL_TOKEN = 'wire-test-control-token-0123456789'

export interface GateWireServe {
  child: ChildProcess
  /** `unix:PATH` or `tls://HOST:PORT`. */
  url: string
  controlUrl: string
  output(): string
  waitForOutput(pattern: RegExp): Promise<RegExpExecArray>
  exited: Promise<number | null>
}

export async function startWireServe(t: Test, args: string[], env: Record<string, string> = {}): Promise<GateWireServe> {
  const child = spawn(process.execPath, [GATE_MAIN, 'wire', 'serve', ...args], { env: { ...process.env, GATE_CONTROL_TOKEN: TEST_CONTROL_TOKEN, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  let out = ''
  const waiters = new Set<() => void>()
  const onData = (chunk: Buffer) => {
    out += chunk.toString('utf8')
    for (const w of waiters) w()
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const waitForOutput = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(out)
        if (m === null) return
        waiters.delete(check)
        resolve(m)
      }
      waiters.add(check)
      void exited.then(code => {
        if (waiters.has(check)) reject(new Error(`gate wire serve exited (${code}) before ${pattern}:\n${out}`))
      })
      check()
    })
  const url = (await waitForOutput(/wire \(gate-wire-v1\) listening on ((?:unix:|tls:\/\/)[^\s"]+)/))[1]!
  const controlUrl = (await waitForOutput(/control routes \(approvals\) on (http:\/\/[^\s"]+)/))[1]!
  return { child, url, controlUrl, output: () => out, waitForOutput, exited }
}

/** PEM files of a test CA, a server certificate for 127.0.0.1, a client it signed, and a self-signed stranger. */
export interface MtlsFiles {
  ca: string
  serverCert: string
  serverKey: string
  client: { cert: Buffer; key: Buffer; ca: Buffer }
  stranger: { cert: Buffer; key: Buffer; ca: Buffer }
}

export function makeMtlsFiles(dir: string): MtlsFiles {
  const p = (name: string) => join(dir, name)
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  const openssl = (...args: string[]) => {
    const r = spawnSync('openssl', args, { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`)
  }
  openssl('req', '-x509', ...ec, '-days', '1', '-keyout', p('ca.key'), '-out', p('ca.pem'), '-subj', '/CN=gate-wire-test-ca')
  writeFileSync(p('server.ext'), 'subjectAltName=IP:127.0.0.1\n')
  for (const [name, cn] of [['server', '127.0.0.1'], ['client', 'agent-1']] as const) {
    openssl('req', ...ec, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', `/CN=${cn}`)
    openssl('x509', '-req', '-in', p(`${name}.csr`), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '1', '-out', p(`${name}.pem`), ...(name === 'server' ? ['-extfile', p('server.ext')] : []))
  }
  openssl('req', '-x509', ...ec, '-days', '1', '-keyout', p('stranger.key'), '-out', p('stranger.pem'), '-subj', '/CN=stranger')
  const ca = readFileSync(p('ca.pem'))
  return {
    ca: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    client: { cert: readFileSync(p('client.pem')), key: readFileSync(p('client.key')), ca },
    stranger: { cert: readFileSync(p('stranger.pem')), key: readFileSync(p('stranger.key')), ca },
  }
}
