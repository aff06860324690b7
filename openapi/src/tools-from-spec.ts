// spec 01, Library: tools_from_spec(input) → list<ToolDefinition>.
import { convertSpec } from './convert-spec.js'
import type { GeneratorConfig } from './generator-config.js'
import type { ToolDefinition } from './types.js'

/** Tool definitions of every published operation, in path then method order. */
export function toolsFromSpec(input: string, config?: GeneratorConfig): ToolDefinition[] {
  return convertSpec(input, config)
    .operations.filter(op => op.published)
    .map(op => op.tool)
}
