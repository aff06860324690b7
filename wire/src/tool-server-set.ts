// The tool servers behind one wire endpoint, by the `server_id` grants and tool_call_request name:
// wrapped MCP servers (`--tool-server ID=COMMAND`) and an OpenAPI API (`--spec`, `--upstream`). Each
// keeps the policy its kind gives its tools (docs/mcp.md, "Which calls need a token").
import type { ServedTool, ToolServer } from '@gate/mcp'
import { WireConfigError } from './errors.js'

/** What a call names: its tool server, and the tool's definition when that server lists it. */
export interface ResolvedTool {
  server: ToolServer | undefined
  tool: ServedTool | undefined
}

export class ToolServerSet {
  readonly #servers: ReadonlyMap<string, ToolServer>

  /** Throws WireConfigError when a server id repeats or is empty. */
  constructor(entries: Iterable<readonly [serverId: string, server: ToolServer]>) {
    const servers = new Map<string, ToolServer>()
    for (const [id, server] of entries) {
      if (id === '') throw new WireConfigError('a tool server id must not be empty')
      if (servers.has(id)) throw new WireConfigError(`two tool servers are named ${JSON.stringify(id)}; every server_id must be unique`)
      servers.set(id, server)
    }
    this.#servers = servers
  }

  get ids(): string[] {
    return [...this.#servers.keys()]
  }

  get(serverId: string): ToolServer | undefined {
    return this.#servers.get(serverId)
  }

  /** The server and the tool a call names; a server that cannot list its tools lists none. */
  async resolve(serverId: string, name: string): Promise<ResolvedTool> {
    const server = this.#servers.get(serverId)
    if (server === undefined) return { server: undefined, tool: undefined }
    const tools = await server.listTools().catch(() => [] as readonly ServedTool[])
    return { server, tool: tools.find(t => t.definition.name === name) }
  }

  /** Stops every tool server; failures are reported, never thrown. */
  async close(log: (line: string) => void): Promise<void> {
    await Promise.all(
      [...this.#servers].map(([id, server]) => server.close().catch(err => log(`stopping tool server ${id} failed: ${(err as Error).message}`))),
    )
  }
}
