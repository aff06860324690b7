// Runs the tool-call section against an MCP edge the suite starts itself: COMMAND ARGS… (for example
// `gate mcp serve --allow-ephemeral-receipts -- node server.js`) is started over stdio with the MCP
// SDK's Client, each check runs once, and the edge is closed afterwards.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CheckSkipped } from '../check-outcome.js'
import { resultOf, summarize, type CheckResult, type Report } from '../report.js'
import { TOOL_CALL_CHECKS, type ToolCallContext } from './tool-call-checks.js'

export interface ToolCallRunOptions {
  /** The MCP edge's command and arguments. */
  command: readonly string[]
  only?: readonly string[]
  env?: Record<string, string>
}

export async function runToolCallConformance(options: ToolCallRunOptions): Promise<Report> {
  const started = Date.now()
  const [command, ...args] = options.command
  if (command === undefined) throw new Error('runToolCallConformance: no command')
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'GATE_CAPABILITY') env[k] = v
  const client = new Client({ name: 'gate-conformance', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command, args, env: { ...env, ...options.env }, stderr: 'ignore' }))
  const results: CheckResult[] = []
  try {
    const ctx: ToolCallContext = { client, tools: (await client.listTools()).tools }
    for (const check of TOOL_CALL_CHECKS) {
      if (options.only !== undefined && options.only.length > 0 && !options.only.includes(check.id)) continue
      const t0 = Date.now()
      try {
        await check.run(ctx)
        results.push(resultOf(check, 'PASS', null, Date.now() - t0))
      } catch (err) {
        const skipped = err instanceof CheckSkipped
        results.push(resultOf(check, skipped ? 'SKIP' : 'FAIL', (err as Error).message, Date.now() - t0))
      }
    }
  } finally {
    await client.close()
  }
  return { sidecarUrl: `mcp: ${options.command.join(' ')}`, spec: 'the edge\'s own tools/list', startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, results, needs: [], ...summarize(results) }
}
