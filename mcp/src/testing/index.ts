import { fileURLToPath } from 'node:url'

/** The compiled fixture MCP server (fixture-server.ts): run it with `node`. */
export const FIXTURE_SERVER_PATH = fileURLToPath(new URL('./fixture-server.js', import.meta.url))

/** The compiled conformance-suite server (conformance-server.ts): stdio, or `--http PORT`. */
export const CONFORMANCE_SERVER_PATH = fileURLToPath(new URL('./conformance-server.js', import.meta.url))

export * from './edge-session-store-contract.js'
