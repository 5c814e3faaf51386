/**
 * Real Chromium for browser tests, through playwright-core and the system's Chromium (Debian's
 * `chromium` package): never a downloaded browser. Suites skip with this message when it is absent.
 */
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

export const CHROMIUM = process.env.PLINTH_CHROMIUM ?? '/usr/bin/chromium'

/** False when Chromium can be launched; otherwise why browser suites are skipped. */
export const browserSkip: string | false = existsSync(CHROMIUM)
  ? false
  : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium): browser tests skipped`

/** `extraArgs`: more Chromium flags, e.g. `--host-resolver-rules` to reach the test server by its configured host. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in CI needs --no-sandbox; the rest keeps Chromium off the (closed) network at start.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  })
}
