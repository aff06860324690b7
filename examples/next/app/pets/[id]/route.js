import { getGate, withGate } from '@gate/next'
import { echo, summarize } from '../../../echo.js'
import { gateOptions } from '../../../gate-options.js'

export const dynamic = 'force-dynamic'

export const GET = withGate(request => echo(request, summarize(getGate(request))), gateOptions)
