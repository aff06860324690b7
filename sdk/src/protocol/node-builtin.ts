// Node built-in modules for code that must also load where they do not exist (the edge runtime): no
// static `node:` import, `process.getBuiltinModule` (Node >= 20.16) at run time instead.

type ProcessWithBuiltins = { getBuiltinModule?: (id: string) => unknown }

/** The built-in module `id` (`node:crypto`, `node:net`), or undefined on a runtime without it. */
export function loadNodeBuiltin<T>(id: string): T | undefined {
  const proc = (globalThis as { process?: ProcessWithBuiltins }).process
  if (typeof proc?.getBuiltinModule !== 'function') return undefined
  try {
    return proc.getBuiltinModule(id) as T | undefined
  } catch {
    return undefined
  }
}
