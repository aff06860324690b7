// Edge middleware: Gate in front of everything under /edge (the routes there read what it passed on).
import { gateMiddleware } from '@gate/next'
import { gateOptions } from './gate-options.js'

export const middleware = gateMiddleware(gateOptions)

export const config = { matcher: '/edge/:path*' }
