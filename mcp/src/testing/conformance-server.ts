#!/usr/bin/env node
// The MCP server the official conformance suite's server scenarios expect (@modelcontextprotocol/
// conformance, `server` mode: the tools, resources and prompts its scenarios call, by the names and
// answers they check), written with the SDK's low-level Server. It runs over stdio (for `gate mcp
// serve-http` to wrap) or, with `--http PORT`, over the SDK's Streamable HTTP transport on loopback (the
// same server, tested directly), so the suite's results can be compared one to one.
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  CreateMessageResultSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'

// a 1x1 PNG and a minimal WAV, base64
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA='

const noArgs = { type: 'object' as const, properties: {} }
const TOOLS: Tool[] = [
  { name: 'test_simple_text', description: 'simple text', inputSchema: noArgs },
  { name: 'test_image_content', description: 'image content', inputSchema: noArgs },
  { name: 'test_audio_content', description: 'audio content', inputSchema: noArgs },
  { name: 'test_embedded_resource', description: 'embedded resource', inputSchema: noArgs },
  { name: 'test_multiple_content_types', description: 'text, image and resource', inputSchema: noArgs },
  { name: 'test_tool_with_logging', description: 'logs while running', inputSchema: noArgs },
  { name: 'test_tool_with_progress', description: 'reports progress', inputSchema: noArgs },
  { name: 'test_error_handling', description: 'answers an error', inputSchema: noArgs },
  { name: 'test_sampling', description: 'asks the client to sample', inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] } },
  { name: 'test_elicitation', description: 'asks the user', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
  { name: 'test_elicitation_sep1034_defaults', description: 'asks the user, with defaults for every primitive type', inputSchema: noArgs },
  { name: 'test_elicitation_sep1330_enums', description: 'asks the user, with every enum form', inputSchema: noArgs },
  {
    name: 'json_schema_2020_12_tool',
    description: 'a JSON Schema 2020-12 input schema',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  },
]

/** What a request handler gets beside the request: `sendRequest` relates what it sends to the call. */
type ToolExtra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1]

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] })

function createConformanceServer(): Server {
  const server = new Server(
    { name: 'gate-conformance-server', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, logging: {}, completions: {} } },
  )
  const log = (data: string) => server.notification({ method: 'notifications/message', params: { level: 'info', logger: 'conformance', data } }).catch(() => {})
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = (request.params.arguments ?? {}) as Record<string, string>
    switch (request.params.name) {
      case 'test_simple_text':
        return text('This is a simple text response for testing.')
      case 'test_image_content':
        return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }
      case 'test_audio_content':
        return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }
      case 'test_embedded_resource':
        return { content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }] }
      case 'test_multiple_content_types':
        return {
          content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: PNG, mimeType: 'image/png' },
            { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
          ],
        }
      case 'test_tool_with_logging':
        for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
          await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } })
        }
        return text('Tool with logging executed successfully')
      case 'test_tool_with_progress': {
        const progressToken = request.params._meta?.progressToken ?? 0
        for (const progress of [0, 50, 100]) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` } })
        }
        return text(String(progressToken))
      }
      case 'test_error_handling':
        return { ...text('This tool intentionally returns an error for testing'), isError: true }
      case 'test_sampling':
        try {
          const sampled = await extra.sendRequest({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: args.prompt ?? '' } }], maxTokens: 100 } }, CreateMessageResultSchema)
          return text(`LLM response: ${(sampled.content as { text?: string }).text ?? 'No response'}`)
        } catch (err) {
          return text(`Sampling not supported or error: ${(err as Error).message}`)
        }
      case 'test_elicitation':
        try {
          const answer = await extra.sendRequest(
            { method: 'elicitation/create', params: { mode: 'form', message: args.message ?? '', requestedSchema: { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] } } },
            ElicitResultSchema,
          )
          return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`)
        } catch (err) {
          return text(`Elicitation not supported or error: ${(err as Error).message}`)
        }
      case 'test_elicitation_sep1034_defaults':
        return elicit(extra, 'Test client default value handling - please accept with defaults', {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        })
      case 'test_elicitation_sep1330_enums':
        return elicit(extra, 'Choose options', {
          untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          titledSingle: { type: 'string', oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }] },
          legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
          untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
          titledMulti: { type: 'array', items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] } },
        })
      case 'json_schema_2020_12_tool':
        return text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)
      default:
        return { ...text(`unknown tool ${request.params.name}`), isError: true }
    }
  })
  const resources = [
    { uri: 'test://static-text', name: 'static-text', mimeType: 'text/plain' },
    { uri: 'test://static-binary', name: 'static-binary', mimeType: 'image/png' },
    { uri: 'test://watched-resource', name: 'watched-resource', mimeType: 'text/plain' },
  ]
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources }))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [{ uriTemplate: 'test://template/{id}/data', name: 'template', mimeType: 'application/json' }] }))
  server.setRequestHandler(ReadResourceRequestSchema, request => {
    const { uri } = request.params
    if (uri === 'test://static-text') return { contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] }
    if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] }
    if (uri === 'test://watched-resource') return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] }
    const template = /^test:\/\/template\/([^/]+)\/data$/.exec(uri)
    if (template !== null) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id: template[1], templateTest: true, data: `Data for ID: ${template[1]}` }) }] }
    throw new Error(`unknown resource ${uri}`)
  })
  server.setRequestHandler(SubscribeRequestSchema, () => ({}))
  server.setRequestHandler(UnsubscribeRequestSchema, () => ({}))
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [
      { name: 'test_simple_prompt', description: 'no arguments' },
      { name: 'test_prompt_with_arguments', description: 'two arguments', arguments: [{ name: 'arg1', required: true }, { name: 'arg2', required: true }] },
      { name: 'test_prompt_with_embedded_resource', description: 'an embedded resource', arguments: [{ name: 'resourceUri', required: true }] },
      { name: 'test_prompt_with_image', description: 'an image' },
    ],
  }))
  server.setRequestHandler(GetPromptRequestSchema, request => {
    const args = request.params.arguments ?? {}
    switch (request.params.name) {
      case 'test_simple_prompt':
        return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] }
      case 'test_prompt_with_arguments':
        return { messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }] }
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            { role: 'user', content: { type: 'resource', resource: { uri: args.resourceUri ?? '', mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
            { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
          ],
        }
      case 'test_prompt_with_image':
        return {
          messages: [
            { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
          ],
        }
      default:
        throw new Error(`unknown prompt ${request.params.name}`)
    }
  })
  server.setRequestHandler(SetLevelRequestSchema, request => {
    void log(`Log level set to: ${request.params.level}`)
    return {}
  })
  server.setRequestHandler(CompleteRequestSchema, () => ({ completion: { values: [], total: 0, hasMore: false } }))
  return server
}

// SEP-1034 and SEP-1330: a form elicitation with the given properties, answered with what the user sent.
// Requests go through the call's `extra` so they ride the call's own response stream: sent unrelated,
// they would go to the session's GET stream, which the client may not have opened yet (then the SDK
// drops them and the call waits out its timeout).
async function elicit(extra: ToolExtra, message: string, properties: Record<string, unknown>): Promise<CallToolResult> {
  try {
    const answer = await extra.sendRequest({ method: 'elicitation/create', params: { mode: 'form', message, requestedSchema: { type: 'object', properties, required: [] } } }, ElicitResultSchema)
    return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`)
  } catch (err) {
    return text(`Elicitation error: ${(err as Error).message}`)
  }
}

async function serveHttp(port: number): Promise<void> {
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const id = req.headers['mcp-session-id']
      let transport = typeof id === 'string' ? sessions.get(id) : undefined
      if (transport === undefined) {
        if (req.method !== 'POST' || id !== undefined) return void res.writeHead(id === undefined ? 400 : 404).end()
        const { port: bound } = http.address() as AddressInfo
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableDnsRebindingProtection: true,
          allowedHosts: [`127.0.0.1:${bound}`, `localhost:${bound}`],
          allowedOrigins: [`http://127.0.0.1:${bound}`, `http://localhost:${bound}`],
          onsessioninitialized: sid => void sessions.set(sid, transport!),
        })
        transport.onclose = () => void (transport!.sessionId !== undefined && sessions.delete(transport!.sessionId))
        await createConformanceServer().connect(transport)
      }
      await transport.handleRequest(req, res)
    })().catch(() => res.headersSent || res.writeHead(500).end())
  })
  http.listen(port, '127.0.0.1', () => {
    process.stdout.write(`conformance server on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`)
  })
}

const httpAt = process.argv.indexOf('--http')
if (httpAt === -1) await createConformanceServer().connect(new StdioServerTransport())
else await serveHttp(Number(process.argv[httpAt + 1] ?? 0))
