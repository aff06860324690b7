// The tool-call section against the real `gate mcp serve` wrapping the fixture MCP server, and against
// the fixture server itself, which has no Gate in front and so fails the required checks.
import t from 'tap'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { findGateCommand } from '../start-sidecar.js'
import { runToolCallConformance } from './run-tool-calls.js'

t.test('gate mcp serve passes every tool-call check', async t => {
  const command = [process.execPath, findGateCommand(), 'mcp', 'serve', '--allow-ephemeral-receipts', '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH]
  const report = await runToolCallConformance({ command })
  t.same(report.results.map(r => [r.id, r.result, r.detail]), [
    ['tools.list_policy', 'PASS', null],
    ['tools.unlisted_tool_denied', 'PASS', null],
    ['tools.grant_required', 'PASS', null],
    ['tools.malformed_capability_denied', 'PASS', null],
    ['tools.unenforced_member_denied', 'PASS', null],
    ['tools.arguments_checked', 'PASS', null],
  ])
  t.equal(report.ok, true)
})

t.test('an MCP server without Gate in front fails the required checks', async t => {
  const report = await runToolCallConformance({ command: [process.execPath, FIXTURE_SERVER_PATH], only: ['tools.list_policy', 'tools.unlisted_tool_denied'] })
  t.match(report.results, [{ id: 'tools.list_policy', result: 'FAIL' }, { id: 'tools.unlisted_tool_denied', result: 'FAIL' }])
  t.equal(report.ok, false)
})
