// YAML text → tree. yaml's own guards stay on (alias-count limit against billion-laughs aliasing,
// unique keys); what it lets through and JSON cannot hold is removed here: an alias to its own
// ancestor yields a cyclic object (rejected), and with `intAsBigInt` integers come back as BigInt
// (turned into numbers, the exact `x-gate-budget-limit` kept aside).
import { isScalar, parseDocument, type Document } from 'yaml'
import { OpenApiError } from './errors.js'
import { BUDGET_LIMIT_KEY } from './read-extensions.js'
import type { ParsedTree } from './types.js'

// yaml's default; repeated here because it is a security limit, not a convenience.
const MAX_ALIAS_COUNT = 100

/** Parses one YAML document into a tree; any syntax, alias or structure failure is `InvalidYaml`. */
export function parseYamlText(text: string): ParsedTree {
  // Only a document that mentions the budget key needs exact integers; the others skip the BigInt walk.
  const needExact = text.includes(BUDGET_LIMIT_KEY)
  let doc: Document.Parsed
  let root: unknown
  try {
    doc = parseDocument(text, { intAsBigInt: needExact, uniqueKeys: true, merge: true, logLevel: 'error' })
    const first = doc.errors[0]
    if (first !== undefined) {
      const pos = first.linePos?.[0]
      const where = pos === undefined ? 'document' : `line ${pos.line}, column ${pos.col}`
      throw new OpenApiError('InvalidYaml', where, firstLine(first.message), first)
    }
    root = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  } catch (err) {
    if (err instanceof OpenApiError) throw err
    // Alias-count overflow (ReferenceError), stack overflow on absurd nesting, anything else from yaml.
    throw new OpenApiError('InvalidYaml', 'document', firstLine(err instanceof Error ? err.message : String(err)), err)
  }
  const exactBudgets = new WeakMap<object, bigint | null>()
  // Aliases need `*`; without one (and without BigInts) the tree is already plain acyclic JSON data.
  if (needExact || text.includes('*')) normalizeTree(root, exactBudgets)
  const parsed = doc
  return {
    root,
    exactBudgets,
    sourceOf(path) {
      const node = parsed.getIn(path, true)
      if (!isScalar(node) || node.range == null) return undefined
      return text.slice(node.range[0], node.range[1])
    },
  }
}

interface Frame {
  node: Record<string, unknown>
  keys: string[]
  next: number
}

// Iterative so a deep (but yaml-accepted) tree cannot overflow the stack here.
function normalizeTree(root: unknown, exactBudgets: WeakMap<object, bigint | null>): void {
  if (root === null || typeof root !== 'object') return
  const state = new Map<object, 'open' | 'done'>()
  const stack: Frame[] = []
  const enter = (node: object): void => {
    state.set(node, 'open')
    stack.push({ node: node as Record<string, unknown>, keys: Object.keys(node), next: 0 })
  }
  enter(root)
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    if (top.next === top.keys.length) {
      state.set(top.node, 'done')
      stack.pop()
      continue
    }
    const key = top.keys[top.next++]!
    const value = top.node[key]
    if (typeof value === 'bigint') {
      if (key === BUDGET_LIMIT_KEY && !Array.isArray(top.node)) exactBudgets.set(top.node, value)
      top.node[key] = Number(value)
    } else if (value !== null && typeof value === 'object') {
      const seen = state.get(value)
      if (seen === 'open') {
        const where = stack.map(f => f.keys[f.next - 1]).join('.')
        throw new OpenApiError('InvalidYaml', where, 'alias refers to its own ancestor')
      }
      if (seen === undefined) enter(value)
    }
  }
}

function firstLine(message: string): string {
  const newline = message.indexOf('\n')
  return (newline === -1 ? message : message.slice(0, newline)).replace(/:$/, '')
}
