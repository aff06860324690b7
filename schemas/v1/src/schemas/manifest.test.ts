import { checkSchema } from '../examples/check-schema.js'
import { manifest, toolDefinition, variant } from '../examples/values.js'

const base = manifest()
const tool = toolDefinition()

checkSchema(
  'gate.manifest.v1',
  [
    { name: 'a full manifest', value: base },
    {
      name: 'only the required members',
      value: { schema: 'gate.manifest.v1', server_id: 's', name: '', version: '', protocol_version: '1.0', tools: [] },
    },
    {
      name: 'a tool with every optional member',
      value: variant(base, (v) => (v.tools = [{ ...tool, pricing: { per_call: { units: 1, currency: 'USD' } }, annotations: { ...tool.annotations, estimated_duration_ms: 0 } }])),
    },
    {
      name: 'an input schema Gate must not interpret',
      value: variant(base, (v) => {
        v.tools[0].input_schema = { type: 'object', 'x-extension': true, minLength: 'not a number', $ref: '#/nowhere', unknownKeyword: [1, 2] }
      }),
    },
    { name: 'an output schema of any shape', value: variant(base, (v) => (v.tools[0].output_schema = { type: 'array', items: { nonsense: true } })) },
    { name: 'an additive manifest member', value: variant(base, (v) => (v.generated_by = 'tools_from_spec')) },
  ],
  [
    { name: 'a tool whose input_schema type is array', value: variant(base, (v) => (v.tools[0].input_schema.type = 'array')), at: '/tools/0/input_schema/type' },
    { name: 'a tool whose input_schema has no type', value: variant(base, (v) => delete v.tools[0].input_schema.type), at: '/tools/0/input_schema' },
    { name: 'an input_schema that is a boolean', value: variant(base, (v) => (v.tools[0].input_schema = true)), at: '/tools/0/input_schema' },
    { name: 'an extra property on annotations', value: variant(base, (v) => (v.tools[0].annotations.open_world = true)), at: '/tools/0/annotations' },
    { name: 'annotations without requires_approval', value: variant(base, (v) => delete v.tools[0].annotations.requires_approval), at: '/tools/0/annotations' },
    { name: 'a string read_only', value: variant(base, (v) => (v.tools[0].annotations.read_only = 'yes')), at: '/tools/0/annotations/read_only' },
    { name: 'a negative estimated duration', value: variant(base, (v) => (v.tools[0].annotations.estimated_duration_ms = -1)), at: '/tools/0/annotations/estimated_duration_ms' },
    { name: 'an extra tool member', value: variant(base, (v) => (v.tools[0].sensitivity = 'internal')), at: '/tools/0' },
    { name: 'a tool without description', value: variant(base, (v) => delete v.tools[0].description), at: '/tools/0' },
    { name: 'a tool without annotations', value: variant(base, (v) => delete v.tools[0].annotations), at: '/tools/0' },
    { name: 'an empty tool name', value: variant(base, (v) => (v.tools[0].name = '')), at: '/tools/0/name' },
    { name: 'an empty server_id', value: variant(base, (v) => (v.server_id = '')), at: '/server_id' },
    { name: 'protocol_version 1.1', value: variant(base, (v) => (v.protocol_version = '1.1')), at: '/protocol_version' },
    { name: 'a numeric protocol_version', value: variant(base, (v) => (v.protocol_version = 1.0)), at: '/protocol_version' },
    { name: 'another schema id', value: variant(base, (v) => (v.schema = 'gate.manifest.v2')), at: '/schema' },
    { name: 'a missing schema', value: variant(base, (v) => delete v.schema), at: '(root)' },
    { name: 'an uppercase policy_hash', value: variant(base, (v) => (v.policy_hash = 'A'.repeat(64))), at: '/policy_hash' },
    { name: 'tools as an object', value: variant(base, (v) => (v.tools = { updatePet: tool })), at: '/tools' },
    { name: 'pricing as a string', value: variant(base, (v) => (v.tools[0].pricing = 'free')), at: '/tools/0/pricing' },
  ],
)
