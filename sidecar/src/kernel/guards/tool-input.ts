// Tool calls only: a call that cannot be made as asked, an unknown tool or arguments the tool's
// input_schema rejects (checked by the edge with ajv, before any upstream call), is denied with a
// receipt. It runs after the policy guards, so a caller without a grant for the tool learns nothing of
// the tool's existence or schema, and before approval, nonce and budget, so a call that could never run
// creates no approval and spends nothing.
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export class ToolInputGuard implements Guard {
  readonly name = 'ToolInputGuard'

  check(ctx: GuardContext): GuardOutcome {
    const problem = ctx.subject.inputProblem
    if (problem === undefined) return { pass: true }
    return deny(this.name, problem.reason, { details: { reason_code: problem.code } })
  }
}
