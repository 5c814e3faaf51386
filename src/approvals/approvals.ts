/**
 * The approvals feature as the composition root builds it: promotion requests, scheduled
 * promotions and preview expiry, and this instance's look for due schedules every half minute.
 */
import type { Config } from '../config.ts'
import { type Periodic, startPeriodic } from '../core/periodic.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { Db } from '../db/connect.ts'
import type { FormMail } from '../forms/form-mail.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { WebhookEvents } from '../webhooks/webhook-events.ts'
import type { VersionFiles } from '../websites/version-files.ts'
import type { VersionPromoter, VersionPromotion } from '../websites/version-promotion.ts'
import type { WebsitesRepository } from '../websites/websites.repository.ts'
import { ApprovalsRepository } from './approvals.repository.ts'
import { PromotionMail } from './promotion-mail.ts'
import { PromotionRequests } from './promotion-requests.ts'
import { PromotionSchedules, SCHEDULE_CHECK_MS } from './promotion-schedules.ts'

export interface Approvals {
  requests: PromotionRequests
  /**
   * Makes a version live as VersionPromotion does, then approves the version's pending promotion
   * request (PromotionRequests.approveByPromotion): what every promote but an approval goes through.
   */
  promoter: VersionPromoter
  schedules: PromotionSchedules
  mail: PromotionMail
  /** Runs due schedules now and then every half minute. */
  start(): Promise<void>
  close(): Promise<void>
}

export interface ApprovalsOptions {
  config: Pick<Config, 'siteScheme' | 'siteDomain' | 'siteUrl'>
  db: Db
  access: WebsiteAccess
  versions: WebsitesRepository
  promotion: VersionPromotion
  versionFiles: VersionFiles
  siteEvents: SiteEvents
  webhookEvents: WebhookEvents
  /** The SMTP sender of forms (PLINTH_SMTP_URL); null without SMTP. */
  mailer: Pick<FormMail, 'deliver'> | null
  now: () => Date
  log: { warn(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void }
}

export function setUpApprovals(options: ApprovalsOptions): Approvals {
  const { config, db, access, versions, promotion, versionFiles, siteEvents, webhookEvents, mailer, now, log } = options
  const repo = new ApprovalsRepository(db.kysely)
  const mail = new PromotionMail({ deliver: mailer && ((message) => mailer.deliver(message)), repo, siteUrl: config.siteUrl, log })
  const requests = new PromotionRequests({ config, access, versions, repo, promotion, versionFiles, webhookEvents, notices: mail, now })
  const promoter: VersionPromoter = {
    async promote(principal, websiteId, versionId) {
      const version = await promotion.promote(principal, websiteId, versionId)
      await requests.approveByPromotion(principal, websiteId, version.id)
      return version
    },
  }
  const schedules = new PromotionSchedules({ config, access, versions, repo, promotion: promoter, siteEvents, now, log })
  let periodic: Periodic | undefined
  let running: Promise<unknown> = Promise.resolve()
  const runDue = () => (running = schedules.runDue().catch((err: unknown) => log.error({ err }, 'running due schedules failed')))
  return {
    requests,
    promoter,
    schedules,
    mail,
    async start() {
      periodic = await startPeriodic(runDue, SCHEDULE_CHECK_MS, (err) => log.error({ err }, 'running due schedules failed'))
    },
    async close() {
      periodic?.stop()
      await running
      await mail.settled()
    },
  }
}
