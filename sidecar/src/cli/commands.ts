// The table of `gate` subcommands. Each entry loads its module on demand; a module exports
// `run(argv: string[]): Promise<number>` returning the exit code (0 ok, 1 failure, 2 usage error).

export interface CommandModule {
  run(argv: string[]): Promise<number>
}

export interface CommandEntry {
  summary: string
  load(): Promise<CommandModule>
  /** Subcommands with a second word (`gate api protect`, `gate receipt list`). */
  sub?: Record<string, CommandEntry>
}

export const COMMANDS: Record<string, CommandEntry> = {
  sidecar: { summary: 'run the evaluation sidecar (policy, receipts, /gate routes)', load: () => import('./sidecar.js') },
  check: { summary: 'parse an OpenAPI document and print its route table and tools', load: () => import('./check.js') },
  capability: { summary: 'issue or revoke capability tokens through the control routes', load: () => import('./capability.js') },
  keygen: { summary: 'write a new authority signing key file (0600; --algorithm ed25519|p256|p384|hybrid)', load: () => import('./keygen.js') },
  trust: {
    summary: 'trust-control commands: gate trust serve (receipt query, analytics, reports, authority)',
    // never called: runCommand descends into `sub` first
    load: () => import('./trust-serve.js'),
    sub: {
      serve: { summary: 'serve trust-control over a receipt store (receipt query, analytics, operator report, authority)', load: () => import('./trust-serve.js') },
      migrate: { summary: "apply trust-control's PostgreSQL migrations and exit (--database-url)", load: () => import('./trust-migrate.js') },
    },
  },
  receipt: {
    summary: 'receipts: list (query), verify (offline), explain (one receipt in words), proof, health, flush, checkpoint status|create, audit',
    load: () => import('./receipt.js'),
  },
  api: {
    summary: 'HTTP API commands: gate api protect (reverse proxy with receipts)',
    // never called: runCommand descends into `sub` first
    load: () => import('./api-protect.js'),
    sub: {
      protect: { summary: 'reverse proxy: capability checks and a signed receipt for every request to an upstream API', load: () => import('./api-protect.js') },
    },
  },
  mcp: {
    summary: 'MCP commands: gate mcp serve (stdio) and gate mcp serve-http (hosted), the guard between an agent and its tools',
    // never called: runCommand descends into `sub` first
    load: () => import('./mcp-serve.js'),
    sub: {
      serve: { summary: 'speak MCP over stdio and decide every tool call (a wrapped MCP server or an OpenAPI API) with a signed receipt', load: () => import('./mcp-serve.js') },
      'serve-http': { summary: 'the hosted MCP edge: the same guard over Streamable HTTP (/mcp) for remote agents, with sessions, admission and replay', load: () => import('./mcp-serve-http.js') },
    },
  },
  run: { summary: "run an agent that speaks Gate's native wire (GATE_WIRE_SOCKET): every tool call decided, with a signed receipt", load: () => import('./run.js') },
  wire: {
    summary: "native wire commands: gate wire serve (Gate's framed wire for long-running agents, unix or mutual TLS)",
    // never called: runCommand descends into `sub` first
    load: () => import('./wire-serve.js'),
    sub: {
      serve: { summary: "serve Gate's native framed wire on a Unix socket or TCP with mutual TLS; the same tool-call path as gate run", load: () => import('./wire-serve.js') },
    },
  },
}

const USAGE_EXIT = 2

/** Resolves argv against the command table and runs the chosen module. */
export async function runCommand(argv: string[], table: Record<string, CommandEntry>, prefix = 'gate'): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(renderHelp(table, prefix))
    return name === undefined ? USAGE_EXIT : 0
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${await readVersion()}\n`)
    return 0
  }
  const entry = table[name]
  if (entry === undefined) {
    process.stderr.write(`${prefix}: unknown command "${name}"\n\n${renderHelp(table, prefix)}`)
    return USAGE_EXIT
  }
  if (entry.sub !== undefined) return runCommand(rest, entry.sub, `${prefix} ${name}`)
  const mod = await entry.load()
  return mod.run(rest)
}

function renderHelp(table: Record<string, CommandEntry>, prefix: string): string {
  const width = Math.max(...Object.keys(table).map(k => k.length)) + 2
  const lines = Object.entries(table).map(([k, e]) => `  ${k.padEnd(width)}${e.summary}`)
  return `Usage: ${prefix} <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun "${prefix} <command> --help" for a command's options.\n`
}

async function readVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises')
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}
