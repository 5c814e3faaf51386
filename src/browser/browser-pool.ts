/**
 * One Chromium for the whole process, driven by playwright-core (loaded on the first page asked
 * for, never at start) and launched once: started on first use, reused, started again when it
 * dies. Pages are loaded a few at a time; the others wait in a bounded queue, and past it a
 * request is BROWSER_BUSY. The browser is another process: the event loop only waits on it.
 */
import { existsSync } from 'node:fs'
import type { Browser } from 'playwright-core'
import { AppError } from '../core/errors.ts'
import { BROWSER_PAGE_MEMORY_MB, BROWSER_QUEUE_MAX, BROWSER_RETRY_SECONDS } from '../core/limits.ts'
import { lowerBrowserPriority } from './browser-priority.ts'

export interface BrowserPoolOptions {
  /** The browser executable; null when the operator turned the browser off. */
  executable: string | null
  /** Pages loaded at once. */
  pages: number
  log: { warn(obj: unknown, msg?: string): void }
}

/** What the pool does now, and the most pages it ever had open at once. */
export interface BrowserPoolStats {
  running: number
  queued: number
  mostRunning: number
  launches: number
}

/**
 * Chromium's flags: no network of its own beyond what the pages' interception answers (every
 * host name unresolvable, every connection sent to a closed local port), nothing it would fetch
 * for itself, a bounded JavaScript heap per page, and no sandbox (it needs privileges that
 * containers seldom grant; the pages are the site owners' own, loaded for them alone).
 */
function launchArgs(pages: number): string[] {
  return [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-quic',
    '--disable-renderer-priority-management',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-extensions',
    '--host-resolver-rules=MAP * ~NOTFOUND',
    '--proxy-server=http://127.0.0.1:9',
    '--proxy-bypass-list=<-loopback>',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    `--js-flags=--max-old-space-size=${BROWSER_PAGE_MEMORY_MB}`,
    `--renderer-process-limit=${pages + 1}`,
  ]
}

export const browserUnavailable = (why: string): AppError =>
  new AppError(
    'BROWSER_UNAVAILABLE',
    `${why} Screenshots and browser reports need Chromium: install it (apt-get install chromium on Debian) or set PLINTH_BROWSER to its executable, and restart Plinth.`,
  )

export class BrowserPool {
  private browser: Promise<Browser> | null = null
  private running = 0
  private mostRunning = 0
  private launches = 0
  private readonly waiting: Array<() => void> = []
  private closed = false

  constructor(private readonly options: BrowserPoolOptions) {}

  /** Whether a browser can be launched here (its executable exists); the reason when not. */
  unavailable(): string | null {
    const { executable } = this.options
    if (executable === null) return 'The browser is turned off on this instance (PLINTH_BROWSER=off).'
    if (!existsSync(executable)) return `No browser at ${executable}.`
    return null
  }

  stats(): BrowserPoolStats {
    return { running: this.running, queued: this.waiting.length, mostRunning: this.mostRunning, launches: this.launches }
  }

  /**
   * Runs `work` with the browser once a page slot is free: BROWSER_UNAVAILABLE without a browser,
   * BROWSER_BUSY when BROWSER_QUEUE_MAX requests are waiting already.
   */
  async run<T>(work: (browser: Browser) => Promise<T>): Promise<T> {
    const why = this.closed ? 'The browser is shutting down.' : this.unavailable()
    if (why !== null) throw browserUnavailable(why)
    if (this.running >= this.options.pages) {
      if (this.waiting.length >= BROWSER_QUEUE_MAX) {
        throw new AppError('BROWSER_BUSY', `The browser has ${BROWSER_QUEUE_MAX} pages waiting already. Retry in ${BROWSER_RETRY_SECONDS} seconds.`, {
          retryAfterSeconds: BROWSER_RETRY_SECONDS,
        })
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve))
      // Woken by close(): no browser is launched again for a page that waited.
      if (this.closed) throw browserUnavailable('The browser is shutting down.')
    } else this.running++
    this.mostRunning = Math.max(this.mostRunning, this.running)
    try {
      return await work(await this.launched())
    } finally {
      // The slot passes to the first one waiting, or is given back.
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }

  /** The browser, launched on first use and again after it died. */
  private launched(): Promise<Browser> {
    if (this.closed) return Promise.reject(browserUnavailable('The browser is shutting down.'))
    if (this.browser === null) {
      const launching = this.launch()
      this.browser = launching
      const forget = () => {
        if (this.browser === launching) this.browser = null
      }
      // A browser that died, or did not start, is launched again for the next page.
      void launching.then(
        (browser) =>
          browser.on('disconnected', () => {
            if (!this.closed) this.options.log.warn({}, 'the browser stopped; it starts again for the next page')
            forget()
          }),
        forget,
      )
    }
    return this.browser
  }

  private async launch(): Promise<Browser> {
    const { chromium } = await import('playwright-core')
    this.launches++
    let browser: Browser
    try {
      browser = await chromium.launch({
        executablePath: this.options.executable!,
        headless: true,
        args: launchArgs(this.options.pages),
        // Plinth stops the browser itself when it closes.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      })
    } catch (error) {
      this.options.log.warn({ err: error }, 'the browser did not start')
      throw browserUnavailable(`The browser at ${this.options.executable} did not start.`)
    }
    lowerBrowserPriority()
    return browser
  }

  /** Stops the browser; pages asked for afterwards are BROWSER_UNAVAILABLE. */
  async close(): Promise<void> {
    this.closed = true
    for (const wake of this.waiting.splice(0)) wake()
    const browser = this.browser
    this.browser = null
    // A browser that never started has nothing to stop.
    if (browser) await browser.then((b) => b.close()).catch(() => {})
  }
}
