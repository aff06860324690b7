// The tool-call section: behaviours of an MCP edge (`gate mcp serve`, docs/mcp.md) observable from
// the agent's side. tools/call decides on its own whatever tools/list showed, every decision names
// its receipt, and nothing the kernel does not enforce is ignored. Run against an edge without a
// session capability: the denials below are what a caller without a token must get.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { CheckDefinition } from '../check.js'
import { fail, skip } from '../check-outcome.js'

export interface ToolCallContext {
  client: Client
  tools: readonly Tool[]
}

export interface ToolCallCheck extends CheckDefinition {
  run(ctx: ToolCallContext): Promise<void>
}

const RECEIPT_ID = /^[0-9a-f]{64}$/

interface GateMeta {
  verdict?: unknown
  reason_code?: unknown
  receipt_id?: unknown
  required_scope?: unknown
  policy?: unknown
}

async function call(ctx: ToolCallContext, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<{ result: CallToolResult; gate: GateMeta }> {
  const result = (await ctx.client.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) })) as CallToolResult
  const gate = (result._meta as { gate?: GateMeta } | undefined)?.gate
  if (gate === undefined) fail(`tools/call ${name} answered without _meta.gate: ${JSON.stringify(result).slice(0, 200)}`)
  return { result, gate }
}

function expectDenied(name: string, outcome: { result: CallToolResult; gate: GateMeta }, reason: (code: string) => boolean, wanted: string): void {
  const { result, gate } = outcome
  if (gate.verdict !== 'deny' || result.isError !== true) fail(`${name}: expected a denial (isError, _meta.gate.verdict deny), got ${JSON.stringify(gate)}`)
  if (typeof gate.reason_code !== 'string' || !reason(gate.reason_code)) fail(`${name}: expected reason_code ${wanted}, got ${JSON.stringify(gate.reason_code)}`)
  if (typeof gate.receipt_id !== 'string' || !RECEIPT_ID.test(gate.receipt_id)) fail(`${name}: the denial names no receipt id (got ${JSON.stringify(gate.receipt_id)})`)
}

const policyOf = (tool: Tool) => ((tool._meta as { gate?: GateMeta } | undefined)?.gate?.policy)

function denyByDefaultTool(ctx: ToolCallContext): Tool {
  return ctx.tools.find(t => policyOf(t) === 'DenyByDefault') ?? skip('the tool server has no tool that needs a grant')
}

export const TOOL_CALL_CHECKS: readonly ToolCallCheck[] = Object.freeze([
  {
    id: 'tools.list_policy',
    description: 'tools/list marks every tool with its Gate policy (_meta.gate.policy SessionAllow or DenyByDefault)',
    specRef: 'docs/mcp.md, tools/list and tools/call',
    required: true,
    async run(ctx) {
      if (ctx.tools.length === 0) skip('the tool server lists no tools')
      const bad = ctx.tools.filter(t => policyOf(t) !== 'SessionAllow' && policyOf(t) !== 'DenyByDefault')
      if (bad.length > 0) fail(`tools without a Gate policy: ${bad.map(t => t.name).join(', ')}`)
    },
  },
  {
    id: 'tools.unlisted_tool_denied',
    description: 'a tool called by a name tools/list did not show is denied with a receipt (tool_unknown or capability_required)',
    specRef: 'issue 27: list filtering alone is a bypass; tools/call decides on its own',
    required: true,
    async run(ctx) {
      const name = `gate-conformance-no-such-tool-${Date.now()}`
      expectDenied(name, await call(ctx, name, {}), code => code === 'tool_unknown' || code === 'capability_required', 'tool_unknown or capability_required')
    },
  },
  {
    id: 'tools.grant_required',
    description: 'a tool that needs a grant, called without a token, is denied capability_required with its required_scope and a receipt',
    specRef: 'spec 02 DenyDetails; docs/mcp.md, Which calls need a token',
    required: true,
    async run(ctx) {
      const tool = denyByDefaultTool(ctx)
      const outcome = await call(ctx, tool.name, {})
      expectDenied(tool.name, outcome, code => code === 'capability_required', 'capability_required')
      const scope = outcome.gate.required_scope
      if (typeof scope !== 'string' || !scope.endsWith(`:${tool.name}`)) fail(`required_scope should name the tool as SERVER:${tool.name}, got ${JSON.stringify(scope)}`)
    },
  },
  {
    id: 'tools.malformed_capability_denied',
    description: 'a per-call _meta.gateCapability that is not a token is denied with a capability_* reason, never ignored',
    specRef: 'docs/mcp.md, Presenting a capability',
    required: true,
    async run(ctx) {
      const tool = denyByDefaultTool(ctx)
      expectDenied(tool.name, await call(ctx, tool.name, {}, { gateCapability: 'not a capability token' }), code => code.startsWith('capability_'), 'capability_*')
    },
  },
  {
    id: 'tools.unenforced_member_denied',
    description: 'a signed approval token in _meta.gateApprovalToken, which this path does not enforce, is denied approval_tokens_unsupported',
    specRef: 'docs/mcp.md, Presenting a capability (unenforced members)',
    required: true,
    async run(ctx) {
      const tool = ctx.tools.find(t => policyOf(t) === 'SessionAllow') ?? ctx.tools[0] ?? skip('the tool server lists no tools')
      expectDenied(tool.name, await call(ctx, tool.name, {}, { gateApprovalToken: 'x' }), code => code === 'approval_tokens_unsupported', 'approval_tokens_unsupported')
    },
  },
  {
    id: 'tools.arguments_checked',
    description: "arguments that fail a session-allowed tool's inputSchema (a required property missing) are denied arguments_invalid before the tool runs",
    specRef: 'issue 27, Bad input: arguments checked with ajv before any upstream call',
    required: true,
    async run(ctx) {
      const tool = ctx.tools.find(t => policyOf(t) === 'SessionAllow' && (t.inputSchema.required?.length ?? 0) > 0) ?? skip('no session-allowed tool has a required argument')
      expectDenied(tool.name, await call(ctx, tool.name, {}), code => code === 'arguments_invalid', 'arguments_invalid')
    },
  },
])
