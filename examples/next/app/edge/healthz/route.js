import { getGateForwarded } from '@gate/next'
import { echo, summarizeForwarded } from '../../../echo.js'

export const dynamic = 'force-dynamic'

export const GET = request => echo(request, summarizeForwarded(getGateForwarded(request)))
