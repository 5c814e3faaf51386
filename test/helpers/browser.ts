/**
 * Real Chromium for browser tests, through playwright-core and the system's Chromium (Debian's
 * `chromium` package): never a downloaded browser. Suites skip with this message when it is absent.
 */
import { existsSync } from 'node:fs'
import axe from 'axe-core'
import { type Browser, chromium, type Page } from 'playwright-core'

export const CHROMIUM = process.env.PLINTH_CHROMIUM ?? '/usr/bin/chromium'

/*
 * Pages keep Playwright's own step timeout (a navigation, a click, a wait for a URL or an
 * element: 30 s). Suites set no shorter one: the end-to-end tier runs several Chromiums and
 * servers side by side on two cores, where a sign-in (scrypt, then the dashboard) has been seen
 * to take over 10 s. A step that never completes still fails, only later.
 */

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

/**
 * The serious and critical axe-core violations of the page as it is now, one line each (rule,
 * help, where). axe is evaluated through the DevTools protocol, which the page's CSP does not
 * govern, so the page keeps its real CSP.
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source)
  const violations = await page.evaluate(() =>
    (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] }).then((r) =>
      r.violations.map((v) => ({
        id: v.id,
        impact: v.impact ?? null,
        help: v.help,
        helpUrl: v.helpUrl,
        targets: v.nodes.map((n) => JSON.stringify(n.target)),
      })),
    ),
  )
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.helpUrl}) at ${v.targets.join(', ')}`)
}
