// `gate receipt SUBCOMMAND` (spec 03, Receipt CLI): one module per subcommand.
//   list     the receipt query (receipt-list.ts)
//   verify   offline verification (receipt-verify.ts)
//   explain  one receipt in words (receipt-explain.ts)
//   proof, health, flush, checkpoint, audit: the transparency log (receipt-log.ts, receipt-audit.ts)
import { dropOutputAfterClosedPipe } from './closed-output.js'
import { runWithExitCodes } from './parse-flags.js'
import { EXPLAIN_USAGE, explain } from './receipt-explain.js'
import { list, LIST_USAGE } from './receipt-list.js'
import { TRANSPARENCY_COMMANDS } from './receipt-log.js'
import { verify, VERIFY_USAGE } from './receipt-verify.js'

export async function run(argv: string[]): Promise<number> {
  // every receipt command prints for a reader that may stop early (| head)
  dropOutputAfterClosedPipe()
  const [verb, ...rest] = argv
  if (verb === 'list') return runWithExitCodes('receipt list', LIST_USAGE, () => list(rest))
  if (verb === 'verify') return runWithExitCodes('receipt verify', VERIFY_USAGE, () => verify(rest))
  if (verb === 'explain') return runWithExitCodes('receipt explain', EXPLAIN_USAGE, () => explain(rest))
  const transparency = TRANSPARENCY_COMMANDS[verb ?? '']
  if (transparency !== undefined) return transparency(rest)
  const help = `Usage: gate receipt (list|verify|explain|proof|health|flush|checkpoint|audit) ...\n\n${LIST_USAGE}\n\n${VERIFY_USAGE}\n\n${EXPLAIN_USAGE}\n\nTransparency log: gate receipt proof|health|flush|checkpoint|audit --help\n`
  if (verb === '--help' || verb === '-h' || verb === 'help') {
    process.stdout.write(help)
    return 0
  }
  process.stderr.write(verb === undefined ? help : `gate receipt: unknown subcommand "${verb}"\n\n${help}`)
  return 2
}
