// An upstream's HTTP answer as a tool result (docs/mcp.md): JSON becomes text content (and
// structuredContent when it is an object), text stays text, anything else is an embedded resource with
// the bytes in base64. A non-2xx status is a completed call with `isError`. A body that says it is
// JSON and is not is the upstream breaking its own contract: the call did not complete.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { isJsonReadError, readJson } from '@gate/sdk'
import { ToolServerError } from './errors.js'

export interface HttpAnswer {
  status: number
  contentType: string | undefined
  body: Buffer
  url: string
}

export function toToolResult(answer: HttpAnswer): CallToolResult {
  const isError = answer.status < 200 || answer.status > 299
  const type = (answer.contentType ?? '').split(';')[0]!.trim().toLowerCase()
  const result: CallToolResult = { content: [] }
  if (type === 'application/json' || type.endsWith('+json')) {
    const text = answer.body.toString('utf8')
    // the project's one JSON reader (depth and node limits): an answer past them still goes to the
    // agent as text, only without structuredContent
    let parsed: unknown
    try {
      parsed = readJson(text).value
    } catch (err) {
      if (!isJsonReadError(err) || err.kind === 'syntax') {
        throw new ToolServerError('upstream', `the upstream answered ${answer.status} with a body that is not the JSON its content-type (${type}) says`, err)
      }
    }
    result.content.push({ type: 'text', text })
    if (!isError && typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) result.structuredContent = parsed as Record<string, unknown>
  } else if (answer.body.length === 0) {
    result.content.push({ type: 'text', text: `HTTP ${answer.status}` })
  } else if (type === '' || type.startsWith('text/') || type.endsWith('+xml') || type === 'application/xml') {
    result.content.push({ type: 'text', text: answer.body.toString('utf8') })
  } else {
    result.content.push({ type: 'resource', resource: { uri: answer.url, mimeType: type, blob: answer.body.toString('base64') } })
  }
  if (isError) result.isError = true
  return result
}
