// GET /ui and GET /ui/{asset}: the receipt explorer (docs/observability.md), static files read once at
// startup from the package's ui/ folder. The page and its scripts hold no data and need no token; every
// receipt, report and chart they show is read from the /v1 routes with the token the user enters, so
// the explorer sees exactly what that token may read. The ML-DSA-65 verifier the page checks hybrid
// signatures with is served beside them from the installed @noble packages (ui-vendor.ts).
import { readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { NotFoundError } from '@gate/sdk'
import { sendTrustError } from '@gate/sdk/server'
import type { TrustRoute } from './trust-route.js'
import { loadVendorModules } from './ui-vendor.js'

const UI_DIR = new URL('../../ui/', import.meta.url)

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
}

const ASSETS = ['explorer.css', 'explorer.js', 'receipt-verify.js', 'receipt-words.js', 'charts.js']

// Scripts and styles from this origin only, fetches to this origin only, no framing: receipt text an
// attacker chose (a route, a reason) cannot run as script, and the token cannot be sent elsewhere.
export const UI_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

export interface Asset {
  type: string
  body: Buffer
}

function load(file: string): Asset {
  return { type: TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream', body: readFileSync(new URL(file, UI_DIR)) }
}

function send(res: ServerResponse, asset: Asset): void {
  res.writeHead(200, {
    'content-type': asset.type,
    'content-length': asset.body.length,
    'content-security-policy': UI_CONTENT_SECURITY_POLICY,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  })
  res.end(asset.body)
}

/** The explorer's assets by name: its own files and the vendored verifier's modules. */
export function loadUiAssets(): Map<string, Asset> {
  const assets = new Map(ASSETS.map(name => [name, load(name)]))
  for (const [name, body] of loadVendorModules()) assets.set(name, { type: TYPES.js as string, body })
  return assets
}

/** The explorer's routes: the page at /ui and its assets at /ui/{name}. */
export function createUiRoutes(): TrustRoute[] {
  const page = load('index.html')
  const assets = loadUiAssets()
  return [
    { method: 'GET', path: '/ui', handler: (_req: IncomingMessage, res: ServerResponse) => send(res, page) },
    {
      method: 'GET',
      path: '/ui/:asset',
      handler: (_req: IncomingMessage, res: ServerResponse, params: Record<string, string>) => {
        const asset = assets.get(params.asset ?? '')
        if (asset === undefined) return sendTrustError(res, new NotFoundError(`explorer asset ${params.asset ?? ''}`))
        send(res, asset)
      },
    },
  ]
}
