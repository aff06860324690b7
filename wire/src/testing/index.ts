// Test helpers (subpath `@gate/wire/testing`); not part of the runtime surface.
import { fileURLToPath } from 'node:url'

/** The driven test agent (driven-agent.ts), run as `node DRIVEN_AGENT_PATH` under `gate run`. */
export const DRIVEN_AGENT_PATH = fileURLToPath(new URL('./driven-agent.js', import.meta.url))
export { AgentDriver, type AgentEvent } from './agent-driver.js'
