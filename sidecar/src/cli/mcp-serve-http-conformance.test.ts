// The official MCP conformance suite (@modelcontextprotocol/conformance, `server` mode; it needs Node
// 22 or later, so it runs under the Node 24 that GATE_NODE24 names, as .ci/run sets it) against the
// conformance test server (@gate/mcp/testing) twice: directly over its own Streamable HTTP transport, and
// wrapped over stdio by the real `gate mcp serve-http` with every tool allowed (--allow-tool), each call
// still decided and receipted. Every scenario must end the same both ways, except those a guard
// cannot pass, each named below with why (docs/mcp.md, "The hosted edge"). Without GATE_NODE24 it skips.
import t from 'tap'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { CONFORMANCE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { startGateMcpHttp } from '../testing/mcp-http-session.js'

const node24 = process.env.GATE_NODE24
const SUITE = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js')

const TOOLS = ['test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource', 'test_multiple_content_types', 'test_tool_with_logging', 'test_tool_with_progress', 'test_error_handling', 'test_sampling', 'test_elicitation', 'json_schema_2020_12_tool']

/** Scenarios that pass directly and cannot pass through the hosted guard, and why. */
const GUARD_DIFFERENCES: Record<string, string> = {
  'tools-call-with-logging': "the wrapped server is shared by every session, so its log notifications cannot be attributed to one session and are not fanned out (spec 03, Events)",
  'tools-call-sampling': "a request the shared wrapped server sends on its own (sampling) cannot be attributed to one session and is refused",
  'tools-call-elicitation': "a request the shared wrapped server sends on its own (elicitation) cannot be attributed to one session and is refused",
  'server-sse-multiple-streams': 'it sends MCP-Protocol-Version 2025-03-26 on a session bound to 2025-11-25; spec 03 answers a mismatched version with 400',
}

/** Runs the suite against `url`: scenario → passed. */
async function runSuite(url: string): Promise<Map<string, boolean>> {
  const child = spawn(node24!, [SUITE, 'server', '--url', url], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')))
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')))
  await new Promise(resolve => child.once('exit', resolve))
  const results = new Map<string, boolean>()
  const summary = out.slice(out.indexOf('=== SUMMARY ==='))
  for (const m of summary.matchAll(/^[✓✗] ([\w./-]+): (\d+) passed, (\d+) failed/gm)) results.set(m[1]!, Number(m[3]) === 0)
  if (results.size === 0) throw new Error(`the conformance suite printed no summary:\n${out.slice(-4000)}`)
  return results
}

t.test('the conformance suite ends the same through gate mcp serve-http as against the server directly', { skip: node24 === undefined ? 'GATE_NODE24 is not set: the conformance suite needs Node 22 or later (point it at a Node 24 binary, as .ci/run does)' : false }, async t => {
  const direct = spawn(process.execPath, [CONFORMANCE_SERVER_PATH, '--http', '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => direct.kill('SIGKILL'))
  const directUrl = await new Promise<string>((resolve, reject) => {
    let out = ''
    direct.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const m = /conformance server on (http:\/\/\S+)/.exec(out)
      if (m !== null) resolve(m[1]!)
    })
    direct.once('exit', code => reject(new Error(`the conformance server exited (${code}): ${out}`)))
  })
  const files = await gateFiles(t)
  // the suite opens a session per scenario and ends few, all as the one anonymous loopback caller
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', files.db, '--authority-seed-file', files.seed, ...TOOLS.flatMap(name => ['--allow-tool', name]), '--max-sessions-per-caller', '1000', '--', process.execPath, CONFORMANCE_SERVER_PATH])
  const expected = await runSuite(directUrl)
  const guarded = await runSuite(gate.url)
  t.same([...guarded.keys()].sort(), [...expected.keys()].sort(), 'the same scenarios ran')
  for (const [scenario, passed] of expected) {
    const why = GUARD_DIFFERENCES[scenario]
    if (why === undefined) t.equal(guarded.get(scenario), passed, `${scenario}: ${passed ? 'passes' : 'fails'} both ways`)
    else {
      t.equal(passed, true, `${scenario} passes directly`)
      t.equal(guarded.get(scenario), false, `${scenario} cannot pass through the guard: ${why}`)
    }
  }
  t.ok([...guarded.values()].filter(Boolean).length >= 20, 'most scenarios pass through the guard')
})
