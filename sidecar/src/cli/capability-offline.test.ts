// `gate capability issue --tool SERVER:TOOL` with --authority-seed-file and no --control-url: signed
// here, offline, with the portable constraints as flags; a tool without its server is refused.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { canonicalJson, createSigner, generateSecret, verifyCapability, type CapabilityToken } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { runGate } from '../testing/spawn-gate.js'

const subject = createSigner({ secret: generateSecret() }).publicKey

t.test('issues offline: one line of canonical JSON, signed by the seed, with the constraint flags on every grant', async t => {
  const { seed } = await gateFiles(t)
  const r = await runGate(['capability', 'issue', '--subject', subject, '--tool', 'fs:read_file', '--tool', 'fs:*', '--authority-seed-file', seed, '--path-prefix', '/srv', '--max-length', '100', '--custom', 'mode=ro', '--audience', 'a', '--audience', 'b', '--max-invocations', '3', '--ttl', '60'])
  t.equal(r.code, 0, r.stderr)
  const [json, header] = r.stdout.trim().split('\n')
  const token = JSON.parse(json!) as CapabilityToken
  t.equal(json, canonicalJson(token), 'canonical JSON')
  t.equal(Buffer.from(header!, 'base64url').toString('utf8'), json, 'then its base64url')
  const authority = createSigner({ secret: Buffer.from(readFileSync(seed, 'utf8').trim(), 'hex') })
  t.match(verifyCapability(token, { trustedIssuers: [authority.publicKey], now: Math.floor(Date.now() / 1000) }), { ok: true })
  t.equal(token.subject, subject)
  t.equal(token.expires_at - token.issued_at, 60)
  const constraints = [
    { type: 'path_prefix', value: '/srv' },
    { type: 'max_length', value: 100 },
    { type: 'custom', value: ['mode', 'ro'] },
    { type: 'audience_allowlist', value: ['a', 'b'] },
  ]
  t.same(token.scope.grants, [
    { server_id: 'fs', tool_name: 'read_file', max_invocations: 3, constraints },
    { server_id: 'fs', tool_name: '*', max_invocations: 3, constraints },
  ])
})

t.test('a tool that names no server, a bad flag value, or both ways to sign are usage errors', async t => {
  const { seed } = await gateFiles(t)
  const bare = await runGate(['capability', 'issue', '--subject', subject, '--tool', 'read_file', '--authority-seed-file', seed])
  t.equal(bare.code, 2)
  t.match(bare.stderr, 'names no tool server: write SERVER:TOOL')
  const empty = await runGate(['capability', 'issue', '--subject', subject, '--tool', 'fs:', '--authority-seed-file', seed])
  t.equal(empty.code, 2)
  const count = await runGate(['capability', 'issue', '--subject', subject, '--tool', 'fs:x', '--max-length=-1', '--authority-seed-file', seed])
  t.match(count.stderr, '--max-length must be a non-negative integer')
  const both = await runGate(['capability', 'issue', '--subject', subject, '--tool', 'fs:x', '--authority-seed-file', seed, '--control-url', 'http://127.0.0.1:9'])
  t.equal(both.code, 2)
  t.match(both.stderr, 'not both')
  const none = await runGate(['capability', 'issue', '--subject', subject, '--authority-seed-file', seed])
  t.match(none.stderr, 'at least one --grant')
})

t.test('a usage error prints the synopsis and where the options are, not the whole help', async t => {
  const { seed } = await gateFiles(t)
  const r = await runGate(['capability', 'issue', '--subject', subject, '--tool', 'read_file', '--authority-seed-file', seed])
  t.equal(r.code, 2)
  t.match(r.stderr, /^gate capability issue: --tool "read_file" names no tool server[^\n]*\nUsage: gate capability issue --subject HEX/)
  t.match(r.stderr, '(every option: gate capability issue --help)')
  t.notMatch(r.stderr, 'Options:', 'not the whole help')
})

t.test('issue 45: a bare --grant is said to be for server "http"; with --spec a grant outside the document is refused', async t => {
  const { seed, spec } = await gateFiles(t)
  const bare = await runGate(['capability', 'issue', '--subject', subject, '--grant', 'read_text_file', '--authority-seed-file', seed])
  t.equal(bare.code, 0, 'issued: an operationId is a valid HTTP grant')
  t.match(bare.stderr, 'gate capability issue: note: --grant "read_text_file" is for HTTP (server "http": the route whose operationId it is); a tool of an MCP or wire tool server is --tool SERVER:read_text_file')
  t.same((JSON.parse(bare.stdout.split('\n')[0]!) as CapabilityToken).scope.grants, [{ server_id: 'http', tool_name: 'read_text_file' }])
  const routes = await runGate(['capability', 'issue', '--subject', subject, '--grant', 'POST /pets', '--grant', 'createPet', '--grant', 'GET /pets/*', '--spec', spec, '--authority-seed-file', seed])
  t.equal(routes.code, 0, routes.stderr)
  t.equal(routes.stderr, '', 'routes and operationIds of the document: no note, no refusal')
  const outside = await runGate(['capability', 'issue', '--subject', subject, '--grant', 'read_text_file', '--grant', 'POST /pet', '--grant', 'POST /pets', '--spec', spec, '--authority-seed-file', seed])
  t.equal(outside.code, 2, 'refused')
  t.match(outside.stderr, `--grant "read_text_file", --grant "POST /pet" cover no route of ${spec} (its routes: gate check --spec ${spec}); a tool of an MCP or wire tool server is --tool SERVER:TOOL`)
  t.equal(outside.stdout, '', 'no token')
})
