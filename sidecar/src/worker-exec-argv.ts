// The Node flags a worker thread of the sidecar starts with: the process's own (a heap limit, or
// --experimental-sqlite on a Node 22 that needs it, must reach the thread too) less the ones that only
// say how the main script was given. A process started as `node --input-type=module -e …` (the store
// tests' child writers do) would otherwise hand `--input-type` to a worker started from a file, which
// Node refuses.
const WITH_VALUE = new Set(['-e', '--eval', '-p', '--print', '--input-type'])

export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const kept: string[] = []
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!
    if (WITH_VALUE.has(flag)) {
      i++ // and its value
      continue
    }
    if (/^--(?:input-type|eval|print)=/.test(flag)) continue
    kept.push(flag)
  }
  return kept
}
