// Starts the real `gate mcp serve` for end-to-end tests and connects the SDK's Client to it over
// stdio (StdioClientTransport), the way an agent does. Resolves once the MCP handshake is done and the
// process has logged its control URL (never a sleep). Closed in teardown.
import type { Test } from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Stream } from 'node:stream'
import { GATE_MAIN } from './spawn-gate.js'

export interface GateMcpSession {
  client: Client
  /** The control routes' base URL (approvals, /v1). */
  controlUrl: string
  /** Everything the process wrote to stderr so far. */
  output(): string
  /** Resolves once stderr matches `pattern` (e.g. a log line that follows an event). */
  waitForOutput(pattern: RegExp): Promise<RegExpExecArray>
  close(): Promise<void>
}

export interface GateMcpOptions {
  env?: Record<string, string>
  /** Client capabilities announced to Gate (sampling, roots, ...). */
  capabilities?: ConstructorParameters<typeof Client>[1]
}

/** `gate mcp serve <args>` with a connected Client. */
export async function startGateMcp(t: Test, args: string[], options: GateMcpOptions = {}): Promise<GateMcpSession> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  const transport = new StdioClientTransport({ command: process.execPath, args: [GATE_MAIN, 'mcp', 'serve', ...args], env: { ...env, ...options.env }, stderr: 'pipe' })
  let out = ''
  const waiters = new Set<() => void>()
  ;(transport.stderr as Stream).on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
    for (const w of waiters) w()
  })
  const waitForOutput = (pattern: RegExp) =>
    new Promise<RegExpExecArray>(resolve => {
      const check = () => {
        const m = pattern.exec(out)
        if (m === null) return
        waiters.delete(check)
        resolve(m)
      }
      waiters.add(check)
      check()
    })
  const client = new Client({ name: 'gate-e2e', version: '1.0.0' }, options.capabilities)
  t.teardown(() => client.close())
  try {
    await client.connect(transport)
  } catch (err) {
    throw new Error(`gate mcp serve ${args.join(' ')} did not start: ${(err as Error).message}\n${out}`)
  }
  const controlUrl = (await waitForOutput(/control routes \(approvals\) on (http:\/\/[^\s"]+)/))[1] as string
  return { client, controlUrl, output: () => out, waitForOutput, close: () => client.close() }
}
