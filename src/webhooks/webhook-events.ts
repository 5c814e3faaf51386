/**
 * What other features tell webhooks: an event of a site, recorded in the transaction of the change
 * it reports (an outbox), so a change that commits always has its event and one rolled back never
 * does. Each enabled webhook of the site that asked for the event type gets a delivery of it; a
 * site no webhook listens to costs one indexed query.
 *
 * The events and their `data`:
 * - `version.published`: `{versionId, version, isCurrent, pageUrl, previewUrl}` for every new version;
 * - `version.promoted`: `{versionId, version, pageUrl}` whenever a version goes live (a publish
 *   that promotes, a promotion, a rollback);
 * - `site.deleted`: `{slug}`;
 * - `entry.changed`: `{collection, slug, entryId, change: created|updated|deleted}`;
 * - `form.submitted`: `{form, submissionId, versionId, createdAt, fields, files}` for each stored
 *   submission (forms/form-intake.ts), files described without their bytes;
 * - `promotion.requested`, `promotion.decided`: the promotion request as getPromotionRequest answers
 *   it (approvals/promotion-requests.ts), pending, then approved or declined.
 *
 * Implemented by webhooks/webhook-outbox.ts; features take it as an option from compose.ts.
 */
import type { WebhookEventType } from '../core/enums.ts'
import type { Executor } from '../db/access.ts'

export interface WebhookEvents {
  /**
   * Records `type` with `data` for the webhooks of `websiteId`, in `db`: the transaction of the
   * change (or the database itself when the change took no transaction). `data` must be JSON.
   */
  emit(db: Executor, websiteId: string, type: WebhookEventType, data: Record<string, unknown>): Promise<void>
  /** Several events of one type at once (a batch of entries): one look-up of the webhooks for all. */
  emitEach(db: Executor, websiteId: string, type: WebhookEventType, items: Array<Record<string, unknown>>): Promise<void>
  /** In a site's deletion transaction: `site.deleted` with `data`, and the site's webhooks retired once they have sent it. */
  siteDeleted(db: Executor, websiteId: string, data: Record<string, unknown>): Promise<void>
}
