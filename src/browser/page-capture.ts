/**
 * Loads one page of a site in a fresh browser context and takes what a careful reviewer would
 * see: a PNG and a report (console errors, failed requests, policy violations, title, load time,
 * sideways scrolling). Every request of the page is intercepted: the site's own origin is
 * answered by the site server in this process, anything else is refused and reported, so the page
 * loads with no network but its own site. The whole capture has a time limit; a page still busy
 * at its end is stopped (PAGE_UNRESPONSIVE). Its load event must come within two thirds of it;
 * a page whose load event never comes is still taken, with that in its report.
 */
import type { Browser, BrowserContext, Page, Request, Route } from 'playwright-core'
import type { Viewport } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'
import { BROWSER_FULL_PAGE_MAX_HEIGHT, BROWSER_REPORT_MAX_ITEMS } from '../core/limits.ts'
import { clipped } from '../core/text.ts'
import type { BrowserReport } from './browser.schemas.ts'
import type { SiteAnswer, SiteRequest } from './site-requests.ts'
import { VIEWPORT_SIZES } from './viewports.ts'
import { lowerBrowserPriority } from './browser-priority.ts'

export interface CaptureTarget {
  /** The site's origin as visitors reach it (`http://my-site--v2.localhost:8080`). */
  origin: string
  /** The Host its requests name. */
  host: string
  path: string
  viewport: Viewport
  fullPage: boolean
}

/** The part of a capture's time its page has to reach its load event. */
const loadTimeLimitMs = (seconds: number) => Math.round((seconds * 1000 * 2) / 3)

export interface Capture {
  png: Buffer
  report: BrowserReport
}

/** The name of the function the page's policy violations are reported through. */
const VIOLATION_BINDING = '__plinthPolicyViolation'
/** Registered before any script of the page runs (through the DevTools protocol, which the page's policy does not govern). */
const VIOLATION_LISTENER = `window.addEventListener('securitypolicyviolation', (e) => window.${VIOLATION_BINDING}({ directive: e.effectiveDirective, blockedUrl: e.blockedURI || '' }), true)`
const REFUSED = 'refused: a page is loaded with no network but its own site'
const TEXT_MAX = 1000

/** Multi-valued headers as the browser is handed them: cookies one a line, others comma-joined (two policies joined so are both enforced). */
function headerRecord(headers: SiteAnswer['headers']): Record<string, string> {
  const record: Record<string, string> = {}
  for (const { name, value } of headers) {
    const key = name.toLowerCase()
    const seen = record[key]
    record[key] = seen === undefined ? value : `${seen}${key === 'set-cookie' ? '\n' : ', '}${value}`
  }
  return record
}

class Findings {
  readonly consoleErrors: BrowserReport['consoleErrors'] = []
  readonly failedRequests: BrowserReport['failedRequests'] = []
  readonly policyViolations: BrowserReport['policyViolations'] = []
  private readonly failedUrls = new Set<string>()

  consoleError(message: string): void {
    if (this.consoleErrors.length < BROWSER_REPORT_MAX_ITEMS) this.consoleErrors.push({ message: clipped(message, TEXT_MAX) })
  }

  failed(url: string, reason: string): void {
    if (this.failedUrls.has(url)) return
    this.failedUrls.add(url)
    if (this.failedRequests.length < BROWSER_REPORT_MAX_ITEMS) this.failedRequests.push({ url: clipped(url, TEXT_MAX), reason })
  }

  violation(directive: unknown, blockedUrl: unknown): void {
    if (this.policyViolations.length < BROWSER_REPORT_MAX_ITEMS)
      this.policyViolations.push({ directive: clipped(String(directive), 100), blockedUrl: clipped(String(blockedUrl), TEXT_MAX) })
  }
}

/** Answers each request of the context: the site's from `fetchSite`, every other one refused. */
async function interceptRequests(context: BrowserContext, target: CaptureTarget, fetchSite: (request: SiteRequest) => Promise<SiteAnswer>, findings: Findings) {
  await context.route('**/*', async (route: Route) => {
    const request = route.request()
    const url = new URL(request.url())
    try {
      if (url.origin !== target.origin) {
        findings.failed(request.url(), REFUSED)
        await route.abort('blockedbyclient')
        return
      }
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(await request.allHeaders())) if (!name.startsWith(':')) headers[name] = value
      headers.host = target.host
      const answer = await fetchSite({ method: request.method(), url: url.pathname + url.search, headers })
      await route.fulfill({ status: answer.status, headers: headerRecord(answer.headers), body: answer.body })
    } catch {
      // The context closed under the request (the time limit), or the site's answer failed: the page sees a failed request.
      findings.failed(request.url(), 'the site did not answer')
      // A closed context has no request left to abort.
      await route.abort('failed').catch(() => {})
    }
  })
  // WebSockets are not requests: each one is refused too (to the page, a socket that closes).
  await context.routeWebSocket(
    () => true,
    (socket) => {
      findings.failed(socket.url(), REFUSED)
      return socket.close({ code: 1008, reason: 'refused' })
    },
  )
}

function watch(page: Page, findings: Findings, document: () => Request | null) {
  page.on('console', (message) => {
    // Failed loads and refusals by the policy are reported in their own lists.
    if (message.type() !== 'error') return
    const text = message.text()
    if (text.startsWith('Failed to load resource') || /Content Security Policy/i.test(text)) return
    findings.consoleError(text)
  })
  page.on('pageerror', (error) => findings.consoleError(`Uncaught ${String(error)}`))
  page.on('requestfailed', (request) => findings.failed(request.url(), request.failure()?.errorText ?? 'failed'))
  page.on('response', (response) => {
    if (response.status() >= 400 && response.request() !== document()) findings.failed(response.url(), `HTTP ${response.status()}`)
  })
}

async function loadAndLook(context: BrowserContext, target: CaptureTarget, findings: Findings, seconds: number): Promise<Capture> {
  const size = VIEWPORT_SIZES[target.viewport]
  const page = await context.newPage()
  // The page's renderer was just started, at the priority Chromium gives it: lowered like the rest.
  lowerBrowserPriority()
  let documentRequest: Request | null = null
  watch(page, findings, () => documentRequest)
  const started = performance.now()
  let status = 0
  const loadLimitMs = loadTimeLimitMs(seconds)
  try {
    const response = await page.goto(`${target.origin}${target.path}`, { waitUntil: 'load', timeout: loadLimitMs })
    // The navigation may have started a renderer of its own.
    lowerBrowserPriority()
    documentRequest = response?.request() ?? null
    status = response?.status() ?? 0
  } catch (error) {
    if (!(error instanceof Error && error.name === 'TimeoutError')) throw error
    findings.consoleError(`The page did not finish loading within ${loadLimitMs / 1000} seconds.`)
  }
  const loadMs = Math.round(performance.now() - started)
  // Web fonts in, then what is on screen now.
  await page.evaluate(() => document.fonts.ready.then(() => undefined))
  const layout = await page.evaluate(() => ({
    width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    client: document.documentElement.clientWidth,
  }))
  const clip = target.fullPage
    ? { x: 0, y: 0, width: size.width, height: Math.min(Math.max(layout.height, size.height), BROWSER_FULL_PAGE_MAX_HEIGHT) }
    : undefined
  const png = await page.screenshot({ type: 'png', fullPage: target.fullPage, clip, caret: 'hide', animations: 'disabled' })
  const report: BrowserReport = {
    path: target.path,
    viewport: target.viewport,
    status,
    title: clipped(await page.title(), TEXT_MAX),
    loadMs,
    consoleErrors: findings.consoleErrors,
    failedRequests: findings.failedRequests,
    policyViolations: findings.policyViolations,
    horizontalOverflow: layout.width > layout.client,
  }
  return { png, report }
}

/** Loads the page and captures it within `seconds`; `fetchSite` answers the site's own requests. */
export async function capturePage(
  browser: Browser,
  target: CaptureTarget,
  fetchSite: (request: SiteRequest) => Promise<SiteAnswer>,
  seconds: number,
): Promise<Capture> {
  const size = VIEWPORT_SIZES[target.viewport]
  const context = await browser.newContext({
    viewport: { width: size.width, height: size.height },
    deviceScaleFactor: 1,
    isMobile: size.mobile,
    hasTouch: size.mobile,
    serviceWorkers: 'block',
    acceptDownloads: false,
  })
  let timedOut = false
  let stop!: (reason: Error) => void
  // The time limit answers the capture whatever the browser does: closing a page that spins may
  // itself wait on its renderer, and nothing the capture awaits settles before the close does.
  const stopped = new Promise<never>((_, reject) => (stop = reject))
  stopped.catch(() => {})
  const deadline = setTimeout(() => {
    timedOut = true
    // Closing stops the page wherever it is; the capture fails with PAGE_UNRESPONSIVE meanwhile.
    context.close().catch(() => {})
    stop(new Error('time limit'))
  }, seconds * 1000)
  const capture = async () => {
    const findings = new Findings()
    await context.exposeBinding(VIOLATION_BINDING, (_source, violation: { directive?: unknown; blockedUrl?: unknown } | null) =>
      findings.violation(violation?.directive, violation?.blockedUrl),
    )
    await context.addInitScript({ content: VIOLATION_LISTENER })
    await interceptRequests(context, target, fetchSite, findings)
    return loadAndLook(context, target, findings, seconds)
  }
  try {
    return await Promise.race([capture(), stopped])
  } catch (error) {
    if (timedOut) {
      throw new AppError(
        'PAGE_UNRESPONSIVE',
        `The page ${clipped(target.path, 200)} kept the browser busy past ${seconds} seconds and was stopped: look for a script that never ends.`,
      )
    }
    throw error
  } finally {
    clearTimeout(deadline)
    // Stopped by the time limit, its close is under way and is not waited for; else closed now.
    if (!timedOut) await context.close().catch(() => {})
  }
}
