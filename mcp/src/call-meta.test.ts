// The Gate members of a tools/call's _meta: read when well-typed, failing closed when not.
import t from 'tap'
import { readCallMeta } from './call-meta.js'

t.test('well-typed members are read; the progress token is kept', async t => {
  const meta = readCallMeta({ gateCapability: 'tok', gateApprovalId: 'ap', gateGovernedIntent: { max_amount: 1 }, gateModel: { name: 'm' }, progressToken: 4 })
  t.same(meta, { capabilityToken: 'tok', approvalId: 'ap', governedIntent: { max_amount: 1 }, modelMetadata: { name: 'm' }, unenforced: [], progressToken: 4 })
  t.same(readCallMeta(undefined), { capabilityToken: undefined, approvalId: undefined, governedIntent: undefined, modelMetadata: undefined, unenforced: [], progressToken: undefined })
})

t.test('a non-string capability or approval id is presented as empty text, which no guard accepts', async t => {
  t.match(readCallMeta({ gateCapability: { id: 'x' }, gateApprovalId: 3 }), { capabilityToken: '', approvalId: '' })
})

t.test('unenforced members and malformed objects are named for the kernel to deny', async t => {
  t.same(readCallMeta({ gateApprovalToken: 'signed', gateExecutionNonce: 'n', gateGovernedIntent: 'x', gateModel: [1] }).unenforced, ['approval_tokens', 'execution_nonce', 'governed_intent', 'model_metadata'])
})

t.test("spec 03's hosted names for model metadata are read too; gateModel wins over them", async t => {
  t.same(readCallMeta({ modelMetadata: { name: 'a' } }).modelMetadata, { name: 'a' })
  t.same(readCallMeta({ gateModelMetadata: { name: 'b' }, modelMetadata: { name: 'a' } }).modelMetadata, { name: 'b' })
  t.same(readCallMeta({ gateModel: { name: 'c' }, gateModelMetadata: { name: 'b' } }).modelMetadata, { name: 'c' })
  t.same(readCallMeta({ modelMetadata: 'x' }).unenforced, ['model_metadata'])
})
