/**
 * Sends webhook deliveries: every instance runs one. It claims due deliveries (a lease on each,
 * webhooks.repository.ts), so instances sharing a database never send one at the same time, and
 * a delivery an instance stopped or crashed while holding is taken up by another, or by the next
 * start, once its lease ends. Each attempt is a signed POST through the SSRF-safe fetcher with a
 * time limit; a 2xx answer delivers it, anything else (another status, a refused address, a
 * timeout) is retried after the next wait of the schedule, with the same `webhook-id`, and the
 * delivery is failed after the last retry.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { WebhookSettings } from '../config.ts'
import { WEBHOOK_ANSWER_MAX_BYTES, WEBHOOK_DELIVERY_RETENTION_DAYS, WEBHOOK_SEND_CONCURRENCY, WEBHOOK_SEND_PER_WEBSITE } from '../core/limits.ts'
import { safeFetch } from '../net/safe-fetch.ts'
import type { SecretBox } from './webhook-secrets.ts'
import { signedHeaders } from './webhook-signing.ts'
import type { DueDelivery, WebhooksRepository } from './webhooks.repository.ts'

export interface WebhookSenderOptions {
  repo: WebhooksRepository
  box: SecretBox
  settings: Readonly<WebhookSettings>
  /** PLINTH_FETCH_ALLOW_HOSTS: the private hosts deliveries may reach. */
  allowHosts: readonly string[]
  /** Extra certificate authorities (PLINTH_FETCH_CA_FILE). */
  ca: string | undefined
  userAgent: string
  log: { warn(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void }
}

/** How long past an attempt's time limit a claim is held: a sender that stopped answering loses it then. */
const LEASE_MARGIN_MS = 60_000
const SWEEP_INTERVAL_MS = 60 * 60 * 1000
const DAY_MS = 24 * 60 * 60 * 1000

export class WebhookSender {
  private timer: NodeJS.Timeout | undefined
  private sweepTimer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private closed = false
  /** Asked to look again while a round was running. */
  private again = false
  private readonly inFlight = new Set<AbortController>()
  /** The deliveries being sent now, each until its attempt is recorded. */
  private readonly sending = new Set<Promise<void>>()
  private sweeping: Promise<void> = Promise.resolve()

  constructor(private readonly options: WebhookSenderOptions) {}

  /** Starts looking for due deliveries, and sweeps old ones now (resolves when done; a failure is logged) and hourly. */
  start(): Promise<void> {
    this.schedule(0)
    this.sweep()
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS)
    this.sweepTimer.unref()
    return this.sweeping
  }

  /** Looks for due deliveries at once (one was just made due here). */
  nudge(): void {
    if (this.closed) return
    if (this.running) this.again = true
    else this.schedule(0)
  }

  /** Stops: no new claim; attempts in flight are cut off and their deliveries given back untouched. */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    clearInterval(this.sweepTimer)
    for (const controller of this.inFlight) controller.abort()
    await this.running
    await Promise.allSettled([...this.sending])
    await this.sweeping
  }

  private schedule(delayMs: number): void {
    if (this.closed) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.running = this.round().finally(() => {
        this.running = undefined
        const again = this.again
        this.again = false
        this.schedule(again ? 0 : this.options.settings.pollMs)
      })
    }, delayMs)
  }

  /**
   * Claims due deliveries into the free slots and sends them, claiming again as slots free (or
   * after the poll interval, for deliveries due meanwhile), until none is due and none is being
   * sent. Each delivery holds its own slot: a slow endpoint never holds up the others' deliveries.
   */
  private async round(): Promise<void> {
    const { log, settings } = this.options
    try {
      while (!this.closed) {
        const free = WEBHOOK_SEND_CONCURRENCY - this.sending.size
        const due = free > 0 ? await this.claim(free) : []
        for (const delivery of due) {
          const sent: Promise<void> = this.send(delivery)
            .catch((error: unknown) => log.error({ err: error }, 'recording a webhook delivery failed; it is sent again once its claim ends'))
            .finally(() => this.sending.delete(sent))
          this.sending.add(sent)
        }
        if (this.sending.size === 0) return
        if (due.length === 0 || this.sending.size === WEBHOOK_SEND_CONCURRENCY)
          await Promise.race([...this.sending, sleep(settings.pollMs, undefined, { ref: false })])
      }
    } catch (error) {
      log.error({ err: error }, 'sending webhook deliveries failed; trying again later')
    }
  }

  /** Claims up to `slots` due deliveries (fairly across webhooks and websites, webhooks.repository.ts). */
  private async claim(slots: number): Promise<DueDelivery[]> {
    const { repo, settings } = this.options
    const claim = randomUUID()
    const now = Date.now()
    const until = new Date(now + settings.timeoutMs + LEASE_MARGIN_MS).toISOString()
    const ids = await repo.claimDue(claim, new Date(now).toISOString(), until, slots, WEBHOOK_SEND_PER_WEBSITE)
    return repo.claimed(ids, claim)
  }

  private async send(delivery: DueDelivery): Promise<void> {
    const { repo, box, settings, allowHosts, ca, userAgent } = this.options
    const controller = new AbortController()
    this.inFlight.add(controller)
    let statusCode: number | null = null
    let problem: string | null = null
    try {
      const secret = box.open(delivery.secret)
      const headers = signedHeaders(secret, delivery.eventId, Math.floor(Date.now() / 1000), delivery.body)
      const answer = await safeFetch(delivery.url, {
        method: 'POST',
        body: delivery.body,
        headers,
        anyStatus: true,
        discardBody: true,
        maxRedirects: 0,
        allowHosts: new Set(allowHosts),
        maxBytes: WEBHOOK_ANSWER_MAX_BYTES,
        connectTimeoutMs: settings.timeoutMs,
        totalTimeoutMs: settings.timeoutMs,
        userAgent,
        ca,
        signal: controller.signal,
      })
      statusCode = answer.status
      if (statusCode < 200 || statusCode > 299) problem = `The endpoint answered HTTP ${statusCode}.`
    } catch (error) {
      if (this.closed && controller.signal.aborted) {
        // Stopped by close(): not an attempt; another sender (or the next start) takes it up.
        await repo.release([delivery.id], delivery.claim)
        this.inFlight.delete(controller)
        return
      }
      problem = (error as Error).message.slice(0, 500)
    }
    this.inFlight.delete(controller)
    const attempts = delivery.attempts + 1
    const at = new Date()
    const wait = settings.retryDelaysMs[attempts - 1]
    const status = problem === null ? 'delivered' : wait === undefined ? 'failed' : 'pending'
    await repo.recordAttempt(delivery.id, delivery.claim, {
      status,
      attempts,
      next_attempt_at: status === 'pending' ? new Date(at.getTime() + wait!).toISOString() : null,
      last_attempt_at: at.toISOString(),
      last_status_code: statusCode,
      last_error: problem,
      finished_at: status === 'pending' ? null : at.toISOString(),
    })
  }

  private sweep(): void {
    const before = new Date(Date.now() - WEBHOOK_DELIVERY_RETENTION_DAYS * DAY_MS).toISOString()
    this.sweeping = this.options.repo.sweep(before).catch((error: unknown) => this.options.log.warn({ err: error }, 'removing old webhook deliveries failed'))
  }
}
