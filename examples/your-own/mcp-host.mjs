// A stand-in MCP host for the README (a desktop app or an IDE does the same from its configuration):
// starts the command after `--` as an MCP server over stdio, with this process's environment (so
// GATE_CAPABILITY reaches `gate mcp serve`), lists its tools with the policy Gate gives each, calls one
// tool with the JSON arguments given, and prints the outcome: the tool's text, or Gate's denial.
//   node examples/your-own/mcp-host.mjs TOOL 'JSON' -- COMMAND [ARG...]
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const dash = process.argv.indexOf('--')
const [tool, json] = process.argv.slice(2, dash < 0 ? undefined : dash)
const [command, ...args] = dash < 0 ? [] : process.argv.slice(dash + 1)
if (tool === undefined || json === undefined || command === undefined) {
  console.error("usage: node examples/your-own/mcp-host.mjs TOOL 'JSON' -- COMMAND [ARG...]")
  process.exit(2)
}
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'pipe' })
let serverLog = ''
transport.stderr?.on('data', chunk => (serverLog += chunk))
const client = new Client({ name: 'your-host', version: '1.0.0' })
try {
  await client.connect(transport)
  const { tools } = await client.listTools()
  console.log(`tools: ${tools.map(t => `${t.name} (${t._meta?.gate?.policy ?? 'no Gate policy'})`).join(', ')}`)
  const result = await client.callTool({ name: tool, arguments: JSON.parse(json) })
  const gate = result._meta?.gate ?? {}
  const denied = result.isError && gate.verdict !== undefined && gate.verdict !== 'allow'
  console.log(`${tool}: ${denied ? `denied ${gate.reason_code} (receipt ${gate.receipt_id})` : `${result.isError ? 'error' : 'ok'}: ${result.content[0]?.text ?? ''}`}`)
} catch (err) {
  console.error(`${err.message}\n${serverLog}`)
  process.exitCode = 1
} finally {
  await client.close()
}
