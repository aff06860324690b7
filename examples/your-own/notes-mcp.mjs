// Stands in for your own MCP server in the README's "Put Gate in front of your own MCP server": two
// tools over stdio, written with the MCP SDK's Server, nothing of Gate. The notes live as long as the
// process.
//   node examples/your-own/notes-mcp.mjs
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const notes = []
const TOOLS = [
  { name: 'list_notes', description: 'Lists the notes', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } },
  {
    name: 'add_note',
    description: 'Adds a note',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  },
]
const text = t => ({ content: [{ type: 'text', text: t }] })

const server = new Server({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }))
server.setRequestHandler(CallToolRequestSchema, request => {
  const args = request.params.arguments ?? {}
  if (request.params.name === 'list_notes') return text(JSON.stringify(notes))
  if (request.params.name === 'add_note') {
    notes.push(String(args.text))
    return text(`added note ${notes.length}: ${args.text}`)
  }
  return { ...text(`no tool ${request.params.name}`), isError: true }
})
await server.connect(new StdioServerTransport())
