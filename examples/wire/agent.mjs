// An agent on Gate's native wire (docs/wire.md), run by `gate run`: it connects to the socket Gate
// names in GATE_WIRE_SOCKET with the SDK's WireClient and calls the filesystem server's tools with the
// capability it was given, exactly as `gate capability issue` printed it. To show a revocation it also
// plays the operator once, through Gate's control routes (a real agent never holds the control token:
// `gate run` keeps every GATE_* variable from it, so this example passes it as OPERATOR_CONTROL_TOKEN).
//
//   node examples/wire/agent.mjs CAPABILITY_FILE CONTROL_URL
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { RawJson, WireClient } from '@gate/sdk/wire'

const [capabilityFile, controlUrl] = process.argv.slice(2)
if (capabilityFile === undefined || controlUrl === undefined) {
  console.error('usage: node examples/wire/agent.mjs CAPABILITY_FILE CONTROL_URL (run it under gate run)')
  process.exit(2)
}
// the token's bytes go out as issued
const capability = new RawJson(readFileSync(capabilityFile, 'utf8').trim())
const tokenId = capability.value.id
const sandbox = resolve('.gate/wire-sandbox')

const client = await WireClient.connect()
const revoked = new Promise(resolve => client.on('capability_revoked', resolve))

await client.heartbeat()
console.log('heartbeat: answered')

async function call(label, tool, params) {
  const { result, receipt } = await client.callTool({ serverId: 'fs', tool, params, capabilityToken: capability })
  const shown =
    result.status === 'ok'
      ? `ok: ${(result.value.content?.[0]?.text ?? JSON.stringify(result.value)).trim()}`
      : result.status === 'err'
        ? `err ${result.error.code}${result.error.detail === undefined ? '' : `: ${typeof result.error.detail === 'string' ? result.error.detail : result.error.detail.reason}`}`
        : `${result.status}: ${result.reason}`
  console.log(`${label}: ${shown} (receipt ${receipt.id}, ${receipt.decision.verdict})`)
}

await call('read_text_file hello.txt', 'read_text_file', { path: `${sandbox}/hello.txt` })
await call('read_text_file /etc/hostname', 'read_text_file', { path: '/etc/hostname' })
await call('write_file', 'write_file', { path: `${sandbox}/note.txt`, content: 'from the agent' })
console.log(`capabilities presented: ${(await client.listCapabilities()).map(c => c.id).join(', ')}`)

const answer = await fetch(`${controlUrl}/v1/revocations`, {
  method: 'POST',
  headers: { authorization: `Bearer ${process.env.OPERATOR_CONTROL_TOKEN}`, 'content-type': 'application/json' },
  body: JSON.stringify({ capabilityId: tokenId }),
})
if (!answer.ok) throw new Error(`revocation failed: ${answer.status} ${await answer.text()}`)
console.log(`revoked ${tokenId}: capability_revoked ${await revoked} pushed`)
await call('read_text_file hello.txt', 'read_text_file', { path: `${sandbox}/hello.txt` })
await client.close()
