// Behind the edge middleware (middleware.js): plain handlers, Gate already decided.
import { getGateForwarded } from '@gate/next'
import { echo, summarizeForwarded } from '../../../echo.js'

export const dynamic = 'force-dynamic'

export const GET = request => echo(request, summarizeForwarded(getGateForwarded(request)))
export const POST = request => echo(request, summarizeForwarded(getGateForwarded(request)))
