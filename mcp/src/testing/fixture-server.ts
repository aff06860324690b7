#!/usr/bin/env node
// A tiny MCP server for tests, written with the SDK's Server over stdio: tools that answer (echo,
// write_note, progress, log), misbehave (crash exits, garbage writes a non-JSON line to stdout before
// answering, hang never answers), ask (sampling through the agent), consult (logs, samples, elicits
// and lists roots in one call; listed only to a client that declared sampling, as servers do), one
// resource and one prompt for the passthrough.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  CreateMessageResultSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js'

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] })
const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object' as const, properties, required, additionalProperties: false })

const FIXTURE_TOOLS = [
  { name: 'echo', description: 'Echoes its text', inputSchema: object({ text: { type: 'string' } }, ['text']), annotations: { readOnlyHint: true } },
  { name: 'write_note', description: 'Pretends to write a note', inputSchema: object({ path: { type: 'string' }, content: { type: 'string' } }, ['path', 'content']) },
  { name: 'progress', description: 'Reports progress twice, then answers once release is called', inputSchema: object({}) },
  { name: 'release', description: 'Lets a waiting progress call answer', inputSchema: object({}) },
  { name: 'log', description: 'Sends a log message, then answers', inputSchema: object({ message: { type: 'string' } }, ['message']) },
  { name: 'ask', description: 'Asks the agent for a sampled message and answers with its text', inputSchema: object({}) },
  { name: 'crash', description: 'Exits the server process', inputSchema: object({}) },
  { name: 'garbage', description: 'Writes a line that is not JSON to stdout, then answers', inputSchema: object({}) },
  { name: 'hang', description: 'Never answers', inputSchema: object({}) },
]

const CONSULT = {
  name: 'consult',
  description: 'Logs, asks the agent to sample and the user to answer, lists the roots, and answers with all of it',
  inputSchema: object({ question: { type: 'string' } }, ['question']),
}

const releases: (() => void)[] = []
const server = new Server({ name: 'gate-fixture', version: '1.0.0' }, { capabilities: { tools: {}, resources: {}, prompts: {}, logging: {} }, instructions: 'fixture instructions' })

server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: server.getClientCapabilities()?.sampling === undefined ? FIXTURE_TOOLS : [...FIXTURE_TOOLS, CONSULT] }))
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = (request.params.arguments ?? {}) as Record<string, string>
  switch (request.params.name) {
    case 'echo': {
      // the trace context Gate sent along (docs/observability.md), shown back for the tracing tests
      const traceparent = request.params._meta?.traceparent
      return typeof traceparent === 'string' ? { ...text(`echo: ${args.text}`), _meta: { received_traceparent: traceparent } } : text(`echo: ${args.text}`)
    }
    case 'write_note':
      return { ...text(`wrote ${args.content!.length} bytes to ${args.path}`), structuredContent: { path: args.path, bytes: args.content!.length } }
    case 'progress': {
      const token = request.params._meta?.progressToken
      if (token !== undefined) {
        for (const progress of [1, 2]) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 2 } })
      }
      // the answer waits for release: the SDK drops progress that arrives in one read with its request's
      // answer, so a test first sees the progress, then releases the call
      await new Promise<void>(resolve => releases.push(resolve))
      return text('done')
    }
    case 'release':
      for (const release of releases.splice(0)) release()
      return text('released')
    case 'log':
      await server.sendLoggingMessage({ level: 'info', data: args.message })
      return text('logged')
    case 'ask': {
      try {
        const sampled = await server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'say something' } }], maxTokens: 10 })
        return text(`sampled: ${(sampled.content as { text: string }).text}`)
      } catch (err) {
        return { ...text(`sampling failed: ${(err as Error).message}`), isError: true }
      }
    }
    case 'consult': {
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'fixture', data: `consulting on ${args.question}` } })
      const sampled = await extra.sendRequest({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: args.question! } }], maxTokens: 10 } }, CreateMessageResultSchema)
      const answer = await extra.sendRequest(
        { method: 'elicitation/create', params: { mode: 'form', message: 'Agree?', requestedSchema: { type: 'object', properties: { agree: { type: 'boolean' } }, required: ['agree'] } } },
        ElicitResultSchema,
      )
      const roots = server.getClientCapabilities()?.roots === undefined ? [] : (await server.listRoots()).roots.map(r => r.uri)
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'fixture', data: 'consulted' } })
      return text(`sampled: ${(sampled.content as { text: string }).text}; answer: ${answer.action} ${JSON.stringify(answer.content ?? {})}; roots: ${roots.join(',')}`)
    }
    case 'crash':
      return process.exit(3)
    case 'garbage':
      process.stdout.write('this line is not JSON\n')
      return text('answered after garbage')
    case 'hang':
      return new Promise<CallToolResult>(() => {})
    default:
      return { ...text(`unknown tool ${request.params.name}`), isError: true }
  }
})
server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: 'fixture://readme', name: 'readme', mimeType: 'text/plain' }] }))
server.setRequestHandler(ReadResourceRequestSchema, request => ({ contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: `contents of ${request.params.uri}` }] }))
server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: 'greet', description: 'Greets someone', arguments: [{ name: 'who', required: true }] }] }))
server.setRequestHandler(GetPromptRequestSchema, request => ({
  messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${request.params.arguments?.who}` } }],
}))

await server.connect(new StdioServerTransport())
