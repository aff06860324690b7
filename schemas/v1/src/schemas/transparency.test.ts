// The transparency log's records: checkpoint statement, inclusion proof, consistency proof.
import { checkSchema } from '../examples/check-schema.js'
import { variant } from '../examples/values.js'

const h = (c: string) => c.repeat(64)
const statement = {
  schema: 'gate.checkpoint_statement.v2',
  log_id: h('a'),
  tree_size: 12,
  root_hash: h('b'),
  timestamp: 1_700_000_000,
  chain_root: h('c'),
  signer_key: h('d'),
  signature: 'e'.repeat(128),
}

checkSchema(
  'gate.checkpoint_statement.v2',
  [
    { name: 'a linked statement', value: statement },
    { name: "a log's first statement (no chain_root)", value: variant(statement, v => delete v.chain_root) },
    { name: 'an empty log', value: variant(statement, v => (v.tree_size = 0)) },
  ],
  [
    { name: 'a v1 statement', value: variant(statement, v => (v.schema = 'gate.checkpoint_statement.v1')), at: '/schema' },
    { name: 'an upper-case root', value: variant(statement, v => (v.root_hash = h('B'))), at: '/root_hash' },
    { name: 'a negative size', value: variant(statement, v => (v.tree_size = -1)), at: '/tree_size' },
    { name: 'an unknown member', value: variant(statement, v => (v.origin = 'x')), at: '(root)' },
    { name: 'no signature', value: variant(statement, v => delete v.signature), at: '(root)' },
  ],
)

const inclusion = { schema: 'gate.transparency.inclusion-proof.v2', receipt_id: h('1'), leaf_index: 6, tree_size: 12, audit_path: [h('2'), h('3')], checkpoint: statement }

checkSchema(
  'gate.transparency.inclusion-proof.v2',
  [
    { name: 'a proof', value: inclusion },
    { name: 'a one-leaf tree (empty path)', value: variant(inclusion, v => ((v.audit_path = []), (v.leaf_index = 0), (v.tree_size = 1))) },
  ],
  [
    { name: 'a path element that is not a hash', value: variant(inclusion, v => (v.audit_path = ['zz'])), at: '/audit_path/0' },
    { name: 'a tree of size 0', value: variant(inclusion, v => (v.tree_size = 0)), at: '/tree_size' },
    { name: 'a malformed checkpoint', value: variant(inclusion, v => delete (v.checkpoint as Record<string, unknown>).root_hash), at: '/checkpoint' },
  ],
)

const consistency = { schema: 'gate.checkpoint_consistency_proof.v2', first: variant(statement, v => ((v.tree_size = 5), delete v.chain_root)), second: statement, proof: [h('4')] }

checkSchema(
  'gate.checkpoint_consistency_proof.v2',
  [{ name: 'a proof', value: consistency }, { name: 'equal sizes (empty proof)', value: variant(consistency, v => ((v.first = statement), (v.proof = []))) }],
  [
    { name: 'a missing second statement', value: variant(consistency, v => delete v.second), at: '(root)' },
    { name: 'the v1 metadata record', value: variant(consistency, v => (v.schema = 'gate.checkpoint_consistency_proof.v1')), at: '/schema' },
  ],
)
