/**
 * Rate limits of form posts, held in memory by each instance: a fixed one-minute window per site
 * and per client address. A post is counted when it is admitted, before its body is read, so a
 * flood costs no parsing; one over either limit is told how long until its window ends. An
 * IPv6 client is counted by its /64 (core/client-network.ts).
 */
import { clientNetwork } from '../core/client-network.ts'

const WINDOW_MS = 60_000
/** Counters kept before the expired ones are dropped. */
const SWEEP_AT = 10_000

interface Window {
  start: number
  count: number
}

export interface FormRates {
  perSitePerMinute: number
  perAddressPerMinute: number
}

export class FormThrottle {
  private readonly windows = new Map<string, Window>()

  constructor(
    private readonly rates: FormRates,
    private readonly now: () => number,
  ) {}

  /** Null when the post may go on (and it is counted), else the seconds until it may. */
  admit(websiteId: string, address: string): number | null {
    const at = this.now()
    const site = this.window(`s:${websiteId}`, at)
    const client = this.window(`a:${clientNetwork(address)}`, at)
    const waits = [
      site.count >= this.rates.perSitePerMinute ? site.start + WINDOW_MS - at : 0,
      client.count >= this.rates.perAddressPerMinute ? client.start + WINDOW_MS - at : 0,
    ]
    const wait = Math.max(...waits)
    if (wait > 0) return Math.max(1, Math.ceil(wait / 1000))
    site.count++
    client.count++
    return null
  }

  private window(key: string, at: number): Window {
    let window = this.windows.get(key)
    if (window === undefined || window.start + WINDOW_MS <= at) {
      if (this.windows.size >= SWEEP_AT) for (const [k, w] of this.windows) if (w.start + WINDOW_MS <= at) this.windows.delete(k)
      window = { start: at, count: 0 }
      this.windows.set(key, window)
    }
    return window
  }
}
