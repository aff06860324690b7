import t from 'tap'
import { parseDocument } from './parse-document.js'
import { OpenApiError } from './errors.js'

const minimalJson = (openapi: unknown = '3.1.0'): string => JSON.stringify({ openapi, info: { title: 'T', version: '1' }, paths: {} })

function kindOf(fn: () => unknown): { kind: string; message: string } {
  try {
    fn()
  } catch (err) {
    if (err instanceof OpenApiError) return { kind: err.kind, message: err.message }
    throw err
  }
  throw new Error('expected an OpenApiError')
}

t.test('a document whose first non-whitespace character is { is parsed as JSON', async t => {
  const doc = parseDocument(`\n\t  ${minimalJson()}`)
  t.equal(doc.format, 'json')
  t.equal(doc.openapi, '3.1.0')
})

t.test('any other first character means YAML', async t => {
  const doc = parseDocument('openapi: 3.0.3\ninfo: {title: T, version: "2"}\npaths: {}\n')
  t.equal(doc.format, 'yaml')
  t.equal(doc.openapi, '3.0.3')
  t.equal(doc.version, '2')
})

t.test('a YAML flow mapping starting with { is detected (and parsed) as JSON, so YAML-only syntax fails as InvalidJson', async t => {
  t.equal(kindOf(() => parseDocument('{openapi: 3.0.0}')).kind, 'InvalidJson')
})

t.test('a byte order mark before JSON is whitespace', async t => {
  t.equal(parseDocument(`\ufeff${minimalJson()}`).format, 'json')
})

t.test('OpenAPI 3.0.x and 3.1.x are accepted', async t => {
  for (const v of ['3.0.0', '3.0.3', '3.1.0', '3.1.1']) t.equal(parseDocument(minimalJson(v)).openapi, v)
})

t.test('Swagger 2.0 (swagger: "2.0", no openapi) fails as MissingField(openapi), naming Swagger', async t => {
  const { kind, message } = kindOf(() => parseDocument(JSON.stringify({ swagger: '2.0', info: { title: 'x', version: '1' }, paths: {} })))
  t.equal(kind, 'MissingField')
  t.match(message, /^MissingField: openapi \(found swagger "2.0"; Swagger 2.0 is unsupported\)$/)
})

t.test('an openapi value not beginning with "3." is UnsupportedVersion', async t => {
  for (const v of ['2.0', '4.0.0', '30.1', ' 3.0.0', '']) {
    const { kind, message } = kindOf(() => parseDocument(minimalJson(v)))
    t.equal(kind, 'UnsupportedVersion', JSON.stringify(v))
    t.match(message, /^UnsupportedVersion: openapi/)
  }
})

t.test('a non-string openapi (YAML `openapi: 3.0` is a number) is UnsupportedVersion', async t => {
  t.equal(kindOf(() => parseDocument('openapi: 3.0\ninfo: {}\npaths: {}\n')).kind, 'UnsupportedVersion')
  t.equal(kindOf(() => parseDocument(minimalJson(3.1))).kind, 'UnsupportedVersion')
})

t.test('missing openapi, info or paths is MissingField naming the field, checked in that order', async t => {
  t.equal(kindOf(() => parseDocument('{"info":{},"paths":{}}')).message, 'MissingField: openapi')
  t.equal(kindOf(() => parseDocument('{"openapi":"3.0.0","paths":{}}')).message, 'MissingField: info')
  t.equal(kindOf(() => parseDocument('{"openapi":"3.0.0","info":{}}')).message, 'MissingField: paths')
  t.equal(kindOf(() => parseDocument('{}')).message, 'MissingField: openapi')
})

t.test('info or paths of the wrong type is InvalidSpec', async t => {
  t.match(kindOf(() => parseDocument('{"openapi":"3.0.0","info":"x","paths":{}}')).message, /^InvalidSpec: info/)
  t.match(kindOf(() => parseDocument('{"openapi":"3.0.0","info":{},"paths":[]}')).message, /^InvalidSpec: paths/)
})

t.test('a root that is not an object is InvalidSpec', async t => {
  for (const text of ['', '- a\n- b\n', 'just text', 'null']) t.equal(kindOf(() => parseDocument(text)).kind, 'InvalidSpec', text)
})

t.test('info.title defaults to "Untitled API" and info.version to "0.0.0"', async t => {
  const doc = parseDocument('{"openapi":"3.0.0","info":{},"paths":{}}')
  t.equal(doc.title, 'Untitled API')
  t.equal(doc.version, '0.0.0')
  t.equal(doc.description, undefined)
  const wrong = parseDocument('{"openapi":"3.0.0","info":{"title":5,"version":null,"description":""},"paths":{}}')
  t.equal(wrong.title, 'Untitled API')
  t.equal(wrong.version, '0.0.0')
})

t.test('a YAML version typed as a number keeps its source text', async t => {
  t.equal(parseDocument('openapi: 3.0.0\ninfo: {title: T, version: 1.0}\npaths: {}\n').version, '1.0')
  t.equal(parseDocument('{"openapi":"3.0.0","info":{"version":2},"paths":{}}').version, '2')
})

t.test('info.description is kept', async t => {
  t.equal(parseDocument('{"openapi":"3.0.0","info":{"description":"About"},"paths":{}}').description, 'About')
})

t.test('JSON that fails to parse is InvalidJson with line and column', async t => {
  const { kind, message } = kindOf(() => parseDocument('{\n  "openapi": "3.0.0",\n}'))
  t.equal(kind, 'InvalidJson')
  t.match(message, /^InvalidJson: line 3, column 1 \(/)
  t.equal(kindOf(() => parseDocument('{')).kind, 'InvalidJson')
})

t.test('YAML that fails to parse is InvalidYaml with line and column', async t => {
  const { kind, message } = kindOf(() => parseDocument('openapi: 3.0.0\ninfo: [1, 2\npaths: {}\n'))
  t.equal(kind, 'InvalidYaml')
  t.match(message, /^InvalidYaml: line \d+, column \d+ \(/)
  t.equal(kindOf(() => parseDocument('a: 1\na: 2\n')).kind, 'InvalidYaml', 'duplicate keys')
  t.equal(kindOf(() => parseDocument('a: 1\n---\nb: 2\n')).kind, 'InvalidYaml', 'several documents')
})

t.test('a YAML alias pointing at its own ancestor is InvalidYaml, not a cyclic tree', async t => {
  const { kind, message } = kindOf(() => parseDocument('openapi: 3.0.0\ninfo: {}\npaths:\n  /a: &loop\n    x: *loop\n'))
  t.equal(kind, 'InvalidYaml')
  t.match(message, /alias refers to its own ancestor/)
})

t.test('YAML alias explosion (billion laughs) is refused as InvalidYaml', async t => {
  const levels = ['a: &a [x, x, x, x, x, x, x, x, x]']
  for (let i = 1; i < 9; i++) levels.push(`l${i}: &l${i} [${Array(9).fill(i === 1 ? '*a' : `*l${i - 1}`).join(', ')}]`)
  t.equal(kindOf(() => parseDocument(`${levels.join('\n')}\n`)).kind, 'InvalidYaml')
})

t.test('absurdly deep YAML nesting is InvalidYaml, never a stack overflow', async t => {
  t.equal(kindOf(() => parseDocument(`a: ${'['.repeat(50_000)}${']'.repeat(50_000)}\n`)).kind, 'InvalidYaml')
})

t.test('an input that is not a string is refused as a GateError', async t => {
  t.throws(() => parseDocument(Buffer.from('{}') as unknown as string), { code: 'gate_invalid_config' })
})
