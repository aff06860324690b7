import { getGate, withGate } from '@gate/next'
import { echo, summarize } from '../../echo.js'
import { gateOptions } from '../../gate-options.js'

export const dynamic = 'force-dynamic'

// in `skip`: Gate does not run, the handler sees a null context
export const GET = withGate(request => echo(request, summarize(getGate(request))), gateOptions)
