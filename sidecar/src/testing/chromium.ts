// Finds and launches a headless Chromium for the browser tests (puppeteer-core; Debian's `chromium`
// package, which .ci/run installs). GATE_CHROMIUM names another binary.
import { existsSync } from 'node:fs'
import type { Browser } from 'puppeteer-core'

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable']

/** The browser binary to drive, or undefined when none is installed. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env.GATE_CHROMIUM
  if (named !== undefined && named !== '') return existsSync(named) ? named : undefined
  return CANDIDATES.find(path => existsSync(path))
}

/** Launches `executablePath` headless; the caller closes it. */
export async function launchChromium(executablePath: string): Promise<Browser> {
  const { launch } = await import('puppeteer-core')
  return launch({
    executablePath,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium refuses its sandbox; the page is a local test server
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  })
}
