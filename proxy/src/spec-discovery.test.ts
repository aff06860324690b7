import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sha256Hex } from '@gate/sdk'
import { DISCOVERY_PATHS, discoverSpec } from './spec-discovery.js'
import { loadSpecDocument } from './spec-source.js'
import { parseUpstreamUrl } from './upstream-url.js'

type Answer = { status: number; headers?: Record<string, string>; body?: string | Buffer }

/** An upstream answering the given raw targets, 404 otherwise; records the targets asked for. */
async function upstream(t: Test, answers: Record<string, Answer | ((origin: string) => Answer)>) {
  const asked: string[] = []
  const server = createServer((req, res) => {
    asked.push(req.url ?? '')
    const a = answers[req.url ?? '']
    const answer = typeof a === 'function' ? a(origin) : a
    if (answer === undefined) {
      res.statusCode = 404
      res.end('not found')
      return
    }
    res.writeHead(answer.status, answer.headers ?? {})
    res.end(answer.body ?? '')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { origin, asked }
}

const DOC = '{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{}}'
const options = { maxRedirects: 3, maxResponseBytes: 1024, timeoutMs: 2000 }

t.test('each of the four probe paths is found when it is the first to answer 2xx', async t => {
  for (const path of DISCOVERY_PATHS) {
    const up = await upstream(t, { [`/base${path}`]: { status: 200, body: DOC } })
    const found = await discoverSpec(parseUpstreamUrl(`${up.origin}/base/`), options)
    t.equal(found.bytes.toString(), DOC, path)
    t.equal(found.url, `${up.origin}/base${path}`)
    t.same(up.asked, DISCOVERY_PATHS.slice(0, DISCOVERY_PATHS.indexOf(path) + 1).map(p => `/base${p}`), 'probed in order, stopped at the first hit')
  }
})

t.test('an empty 2xx body does not win', async t => {
  const up = await upstream(t, { '/openapi.json': { status: 200 }, '/api-docs': { status: 200, body: DOC } })
  t.equal((await discoverSpec(parseUpstreamUrl(up.origin), options)).url, `${up.origin}/api-docs`)
})

t.test('a redirect on the same origin is followed', async t => {
  const up = await upstream(t, { '/openapi.json': { status: 302, headers: { location: '/docs/v1.json' } }, '/docs/v1.json': { status: 200, body: DOC } })
  t.equal((await discoverSpec(parseUpstreamUrl(up.origin), options)).url, `${up.origin}/docs/v1.json`)
})

t.test('a redirect to another authority, scheme or with userinfo is refused and discovery fails with SpecLoad', async t => {
  const other = await upstream(t, { '/openapi.json': { status: 200, body: DOC } })
  const up = await upstream(t, {
    '/openapi.json': { status: 302, headers: { location: `${other.origin}/openapi.json` } },
    '/openapi.yaml': origin => ({ status: 301, headers: { location: origin.replace('http:', 'https:') + '/x' } }),
    '/swagger.json': origin => ({ status: 307, headers: { location: origin.replace('//', '//user:pw@') + '/x' } }),
  })
  const err = await discoverSpec(parseUpstreamUrl(up.origin), options).then(
    () => undefined,
    (e: unknown) => e as Error & { kind: string },
  )
  t.equal(err?.kind, 'SpecLoad')
  t.match(err?.message, /AuthorityDenied/)
  t.match(err?.message, /SchemeDenied/)
  t.match(err?.message, /UserinfoDenied/)
  t.match(err?.message, /--spec/)
  t.notOk(err?.message.includes('pw'), 'credentials are not echoed')
  t.same(other.asked, [], 'the other host was never contacted')
})

t.test('more than three redirects is RedirectLimitExceeded', async t => {
  const up = await upstream(t, {
    '/openapi.json': { status: 302, headers: { location: '/r1' } },
    '/r1': { status: 302, headers: { location: '/r2' } },
    '/r2': { status: 302, headers: { location: '/r3' } },
    '/r3': { status: 302, headers: { location: '/r4' } },
    '/r4': { status: 200, body: DOC },
  })
  await t.rejects(discoverSpec(parseUpstreamUrl(up.origin), options), { message: /RedirectLimitExceeded/ })
})

t.test('a document over the size cap is ResponseTooLarge, declared or streamed', async t => {
  const big = 'x'.repeat(2000)
  const up = await upstream(t, { '/openapi.json': { status: 200, body: big }, '/openapi.yaml': { status: 200, headers: { 'transfer-encoding': 'chunked' }, body: big } })
  await t.rejects(discoverSpec(parseUpstreamUrl(up.origin), options), { message: /openapi\.json: ResponseTooLarge.*openapi\.yaml: ResponseTooLarge/ })
})

t.test('an unreachable upstream fails with SpecLoad naming --spec', async t => {
  const up = await upstream(t, {})
  await t.rejects(discoverSpec(parseUpstreamUrl(up.origin), options), { message: /^SpecLoad: no OpenAPI document found.*404.*--spec PATH/ })
})

t.test('--spec-sha256 pins the document: a mismatch names both hashes', async t => {
  const up = await upstream(t, { '/openapi.json': { status: 200, body: DOC } })
  const target = parseUpstreamUrl(up.origin)
  const good = await loadSpecDocument({ upstream: target, expectedSha256: sha256Hex(DOC).toUpperCase(), discovery: options })
  t.equal(good.discovered, true)
  t.equal(good.sha256, sha256Hex(DOC))
  const wrong = 'ab'.repeat(32)
  await t.rejects(loadSpecDocument({ upstream: target, expectedSha256: wrong, discovery: options }), {
    message: new RegExp(`^Config: .*${sha256Hex(DOC)}.*${wrong}.*refusing to start`),
  })
})

t.test('an unreadable --spec file is SpecLoad', async t => {
  await t.rejects(loadSpecDocument({ specPath: '/nonexistent/openapi.yaml', upstream: parseUpstreamUrl('http://127.0.0.1:1') }), { message: /^SpecLoad: cannot read --spec .*ENOENT/ })
})
