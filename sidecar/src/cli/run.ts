// `gate run [options] -- AGENT_COMMAND [ARGS…]`: runs an agent that speaks Gate's native wire
// (docs/wire.md). Gate starts its tool servers and kernel, listens on a fresh Unix socket (0600, in a
// new 0700 directory), and starts the agent with GATE_WIRE_SOCKET naming it. Every tool call is decided
// and receipted before its answer; the agent's exit status is this command's; SIGINT and SIGTERM go
// to the agent; when it exits, calls still in flight are cancelled, the stores flushed and the socket
// and its directory removed. Gate's log goes to stderr: the agent owns the terminal.
import { WIRE_SOCKET_ENV, WIRE_VERSION, WIRE_VERSION_ENV } from '@gate/sdk/wire'
import { startAgent } from '@gate/wire'
import { GLOBAL_FLAGS_HELP } from '../config/global-flags.js'
import { createRunSocketPath, listenWire } from '../app/wire-listener.js'
import { UsageError } from '../errors.js'
import { SERVICE_POLICY_FLAGS_HELP } from './sidecar.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { startWireService, WIRE_SERVICE_FLAG_OPTIONS, WIRE_TOOL_FLAGS_HELP } from './wire-service.js'

export const RUN_USAGE = `Usage: gate run [options] -- AGENT_COMMAND [ARGS…]

Runs AGENT_COMMAND with GATE_WIRE_SOCKET set to a fresh Unix socket where Gate's kernel speaks the
native wire (${WIRE_VERSION}; docs/wire.md). Every tool_call_request is decided with the capability it
presents and recorded as a signed receipt before it is answered. Exits with the agent's status.

Options:
${WIRE_TOOL_FLAGS_HELP}
  --receipt-store PATH        SQLite receipt store; revocations, approvals, budgets, nonces and issued
                              capabilities live in sibling files (PATH.revocations.db, ...)
  --allow-ephemeral-receipts  keep receipts in memory only (lost on exit); local development only
${SERVICE_POLICY_FLAGS_HELP}

${GLOBAL_FLAGS_HELP}`

const NAME = 'run'

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes(NAME, RUN_USAGE, async () => {
    const { values, positionals } = parseFlags(argv, WIRE_SERVICE_FLAG_OPTIONS, true)
    if (values.help === true) {
      process.stdout.write(RUN_USAGE + '\n')
      return 0
    }
    if (values.listen !== undefined) throw new UsageError('gate run listens on a fresh Unix socket of its own; the control routes take --control-listen')
    const [command, ...args] = positionals
    if (command === undefined) throw new UsageError('the agent to run is required: gate run [options] -- AGENT_COMMAND [ARGS…]')
    const socket = await createRunSocketPath()
    try {
      const wire = await startWireService(values, NAME)
      const { log } = wire
      let listener
      try {
        listener = await listenWire({ kind: 'unix', path: socket.path }, wire.endpoint)
      } catch (err) {
        await wire.close('gate run could not listen')
        throw err
      }
      log(`tool servers: ${wire.describe}`)
      log(`control routes (approvals) on ${wire.service.url}`)
      log(`wire (${WIRE_VERSION}) listening on ${listener.url}; starting the agent`)
      const agent = startAgent({ command, args, env: { [WIRE_SOCKET_ENV]: socket.path, [WIRE_VERSION_ENV]: WIRE_VERSION }, log })
      const status = await agent.exited
      log(`the agent exited with status ${status}`)
      const stopped = listener.close()
      await wire.close('the agent exited')
      await stopped
      return status
    } finally {
      await socket.remove()
    }
  })
}
