/**
 * The forms feature built once for a server (compose.ts): what the site server takes posts
 * through, what owners read them with, the e-mail of each submission and the daily digest when
 * SMTP is set up, and the daily retention sweep.
 */
import type { BlobStore } from '../blobs/blob-store.ts'
import type { BlobVariants } from '../blobs/blob-variants.ts'
import type { BlobsRepository } from '../blobs/blobs.repository.ts'
import type { Config } from '../config.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { Db } from '../db/connect.ts'
import type { WebhookEvents } from '../webhooks/webhook-events.ts'
import { FormDigest } from './form-digest.ts'
import { FormDigestRepository } from './form-digest.repository.ts'
import { FormIntake } from './form-intake.ts'
import { FormMail, NO_NOTICES } from './form-mail.ts'
import { FormThrottle } from './form-throttle.ts'
import { FormsRepository } from './forms.repository.ts'
import { FormsService } from './forms.service.ts'

/** How often a server deletes the submissions past their site's retention. */
const RETENTION_SWEEP_MS = 24 * 60 * 60 * 1000
/** How often a server looks whether the previous day's digest is still to be sent (one instance sends it). */
const DIGEST_CHECK_MS = 60 * 60 * 1000

export interface FormsSetup {
  intake: FormIntake
  service: FormsService
  /** The e-mail of submissions; null without PLINTH_SMTP_URL. */
  mail: FormMail | null
  /** The daily digest of submissions; null without PLINTH_SMTP_URL. */
  digest: FormDigest | null
  startSweeps(): Promise<void>
  close(): Promise<void>
}

export interface FormsSetupOptions {
  config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'siteUrl' | 'baseUrl' | 'formRates'>
  db: Db
  access: WebsiteAccess
  blobs: BlobStore
  blobRows: BlobsRepository
  variants: BlobVariants
  /** Where `form.submitted` is recorded, in the transaction that stores the submission. */
  webhookEvents: WebhookEvents
  log: { warn(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void }
}

export function setUpForms({ config, db, access, blobs, blobRows, variants, webhookEvents, log }: FormsSetupOptions): FormsSetup {
  const repo = new FormsRepository(db.kysely)
  const mail = config.smtpUrl === null ? null : new FormMail({ smtpUrl: config.smtpUrl, from: config.mailFrom, siteUrl: config.siteUrl, repo, log })
  const throttle = new FormThrottle(config.formRates, Date.now)
  const intake = new FormIntake({ repo, throttle, blobs, blobRows, variants, webhookEvents, notices: mail ?? NO_NOTICES })
  const service = new FormsService({ access, repo, blobs, blobRows, baseUrl: config.baseUrl, now: () => new Date() })
  const digest =
    mail === null
      ? null
      : new FormDigest({ repo: new FormDigestRepository(db.kysely), deliver: (message) => mail.deliver(message), siteUrl: config.siteUrl, log })
  let sweeps: NodeJS.Timeout | undefined
  let digests: NodeJS.Timeout | undefined
  const sweep = () => service.sweepRetention().catch((err: unknown) => log.error({ err }, 'deleting form submissions past their retention failed'))
  /** The digest run under way, which close() waits for; never waited for at start (a slow SMTP server must not hold the start up). */
  let digestRun: Promise<unknown> = Promise.resolve()
  const sendDigest = () => {
    if (digest === null) return
    digestRun = digestRun.then(() => digest.run(new Date())).catch((err: unknown) => log.error({ err }, 'sending the daily digest of form submissions failed'))
  }
  return {
    intake,
    service,
    mail,
    digest,
    async startSweeps() {
      sendDigest()
      await sweep()
      sweeps = setInterval(() => void sweep(), RETENTION_SWEEP_MS).unref()
      if (digest !== null) digests = setInterval(sendDigest, DIGEST_CHECK_MS).unref()
    },
    async close() {
      clearInterval(sweeps)
      clearInterval(digests)
      await digestRun
      await mail?.settled()
      mail?.close()
    },
  }
}
