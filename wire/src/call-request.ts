// A tool_call_request as the kernel's tool-call path reads it (the ToolCallRequest the MCP edges build
// from a tools/call): the token's received text, the tool's policy from its server, and the input
// check's finding. spec 03's refused combinations (an approval_token beside non-empty approval_tokens,
// a threshold proposal without approval_tokens, approval_tokens without a proposal) are refused before
// evaluation: each names an authorization member this kernel does not enforce, which the kernel's
// first guard (the authority boundary) denies, with a receipt, before any capability or grant is read.
// Every other unenforced member is denied the same way, never ignored.
import type { CallerIdentity } from '@gate/sdk'
import type { RawJson, ToolCallRequestMessage } from '@gate/sdk/wire'
import type { InputCheck, ToolPolicy } from '@gate/mcp'
import type { ToolCallRequest } from './ports.js'
import type { ResolvedTool } from './tool-server-set.js'

/** A tool no server lists: it needs a grant, so a caller without one learns nothing about it. */
const UNKNOWN_TOOL_POLICY: ToolPolicy = Object.freeze({ decision: 'DenyByDefault', why: 'unknown tool', approvalRequired: false })

export interface CallRequestContext {
  sessionId: string
  caller: CallerIdentity
  inputs: InputCheck
}

/** The members of a request the kernel does not enforce, the refused combination's first. */
export function unenforcedMembers(message: ToolCallRequestMessage): string[] {
  const tokens = message.approval_tokens ?? []
  const out: string[] = []
  const proposal = message.threshold_approval_proposal !== undefined
  // spec 03, Native messages: the three combinations refused before evaluation
  if (message.approval_token !== undefined && tokens.length > 0) out.push('approval_token')
  if (proposal && tokens.length === 0) out.push('threshold_approval_proposal')
  if (!proposal && tokens.length > 0) out.push('approval_tokens')
  if (message.approval_token !== undefined) out.push('approval_token')
  if (tokens.length > 0) out.push('approval_tokens')
  if (proposal) out.push('threshold_approval_proposal')
  if (message.supplemental_authorization !== undefined) out.push('supplemental_authorization')
  if (message.execution_nonce !== undefined) out.push('execution_nonce')
  return [...new Set(out)]
}

/** The decision input for one request. */
export function toDecisionInput(message: ToolCallRequestMessage, resolved: ResolvedTool, ctx: CallRequestContext): ToolCallRequest {
  const token = message.capability_token as RawJson
  const unenforced = unenforcedMembers(message)
  return {
    serverId: message.server_id,
    tool: message.tool,
    params: message.params,
    capabilityToken: token.text,
    governedIntent: message.governed_intent,
    unenforced: unenforced.length === 0 ? undefined : unenforced,
    sessionId: ctx.sessionId,
    caller: ctx.caller,
    policy: resolved.tool?.policy ?? UNKNOWN_TOOL_POLICY,
    inputProblem:
      resolved.server === undefined
        ? { code: 'tool_unknown', reason: `no tool server is named ${JSON.stringify(message.server_id)}` }
        : ctx.inputs.check(message.server_id, message.tool, resolved.tool?.definition, message.params),
  }
}
