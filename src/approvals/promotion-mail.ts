/**
 * The e-mail of a new promotion request, to the site's owner and editors, through the SMTP server
 * forms already send with (forms/form-mail.ts). The requester's note is escaped in the HTML part.
 */
import type { SendMailOptions } from 'nodemailer'
import { escapeHtml } from '../core/html.ts'
import type { ApprovalsRepository } from './approvals.repository.ts'
import type { PromotionRequest } from './approvals.schemas.ts'
import type { PromotionNotices } from './promotion-requests.ts'

export interface PromotionMailOptions {
  /** Sends one message from PLINTH_MAIL_FROM; null without SMTP. */
  deliver: ((message: Omit<SendMailOptions, 'from'>) => Promise<void>) | null
  repo: Pick<ApprovalsRepository, 'peopleOf'>
  siteUrl: string
  log: { warn(obj: unknown, msg?: string): void }
}

/** Header text on one line. */
const oneLine = (text: string, max = 200): string => text.replace(/[\r\n\t\u0000-\u001f\u007f]+/g, ' ').slice(0, max)

export class PromotionMail implements PromotionNotices {
  private readonly sending = new Set<Promise<void>>()

  constructor(private readonly options: PromotionMailOptions) {}

  requested(site: { id: string; name: string }, request: PromotionRequest): void {
    const { deliver } = this.options
    if (deliver === null) return
    const sent = this.send(deliver, site, request).catch((err: unknown) =>
      this.options.log.warn({ err, requestId: request.requestId }, 'sending the e-mail of a promotion request failed'),
    )
    this.sending.add(sent)
    void sent.finally(() => this.sending.delete(sent))
  }

  /** Resolves when every message started so far was sent or failed. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.sending])
  }

  private async send(deliver: NonNullable<PromotionMailOptions['deliver']>, site: { id: string; name: string }, request: PromotionRequest): Promise<void> {
    const to = await this.options.repo.peopleOf(site.id)
    if (to.length === 0) return
    const link = `${this.options.siteUrl}/dashboard/sites/${site.id}/promotion-requests/${request.requestId}`
    const note = request.note ?? ''
    await deliver({
      to,
      subject: oneLine(`Version ${request.version} of ${site.name} is waiting for approval`),
      text: `Version ${request.version} of ${site.name} was asked to go live.\n\n${note === '' ? '' : `Note: ${note}\n\n`}Preview: ${request.previewUrl}\nApprove or decline: ${link}\n`,
      html:
        `<p>Version ${request.version} of ${escapeHtml(site.name)} was asked to go live.</p>` +
        (note === '' ? '' : `<p>Note: ${escapeHtml(note)}</p>`) +
        `<p><a href="${escapeHtml(request.previewUrl)}">Preview</a> · <a href="${escapeHtml(link)}">Approve or decline</a></p>`,
    })
  }
}
