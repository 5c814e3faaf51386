/**
 * E-mail of each form submission, through the SMTP server `PLINTH_SMTP_URL` names (nodemailer,
 * loaded on the first message). The message is from `PLINTH_MAIL_FROM`, never from an address a
 * visitor chose; a sender's validated address is its Reply-To. Every value a visitor sent is
 * escaped in the HTML part, and header values are single lines.
 */
import type { SendMailOptions, Transporter } from 'nodemailer'
import { escapeHtml } from '../core/html.ts'
import type { SubmissionNotice, SubmissionNotices } from './form-intake.ts'
import type { FormsRepository } from './forms.repository.ts'

export interface FormMailOptions {
  /** `smtp://` or `smtps://` URL, with credentials when the server wants them. */
  smtpUrl: string
  /** The From of every message. */
  from: string
  /** Where the dashboard shows a site's inbox: `{siteUrl}/dashboard/sites/{id}/forms/{form}`. */
  siteUrl: string
  repo: Pick<FormsRepository, 'settingsOf'>
  log: { warn(obj: unknown, msg?: string): void }
}

/** Longest value shown in a message; the inbox has the rest. */
const SHOWN_CHARS = 2000

/** Header text on one line, without the characters that would start another. */
const oneLine = (text: string, max = 200): string => text.replace(/[\r\n\t\u0000-\u001f\u007f]+/g, ' ').slice(0, max)

export class FormMail implements SubmissionNotices {
  private transport: Promise<Transporter> | null = null
  /** Messages being sent, so that a server's close (and a test) can wait for them. */
  private readonly sending = new Set<Promise<void>>()

  constructor(private readonly options: FormMailOptions) {}

  submitted(notice: SubmissionNotice): void {
    const sent = this.send(notice).catch((err: unknown) =>
      this.options.log.warn({ err, submissionId: notice.submissionId }, 'sending the e-mail of a form submission failed'),
    )
    this.sending.add(sent)
    void sent.finally(() => this.sending.delete(sent))
  }

  /** Resolves when every message started so far was sent or failed. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.sending])
  }

  close(): void {
    void this.transport
      ?.then((transport) => transport.close())
      .catch(() => {
        // Closing a transport that never connected has nothing to do.
      })
  }

  /** Sends one message through the instance's SMTP server, from PLINTH_MAIL_FROM; counted by settled(). */
  async deliver(message: Omit<SendMailOptions, 'from'>): Promise<void> {
    const sent = this.transportOf().then(async (transport) => {
      await transport.sendMail({ ...message, from: this.options.from })
    })
    this.sending.add(sent)
    try {
      await sent
    } finally {
      this.sending.delete(sent)
    }
  }

  private transportOf(): Promise<Transporter> {
    return (this.transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(this.options.smtpUrl)))
  }

  private async send(notice: SubmissionNotice): Promise<void> {
    const site = await this.options.repo.settingsOf(notice.websiteId)
    // A site on the daily digest is told of its submissions by form-digest.ts instead.
    if (site === undefined || site.notifyMode === 'daily') return
    const to = site.notify === null ? [site.ownerEmail] : (JSON.parse(site.notify) as string[])
    if (to.length === 0) return
    const link = `${this.options.siteUrl}/dashboard/sites/${notice.websiteId}/forms/${notice.form}`
    const rows = Object.entries(notice.data).map(([name, value]) => [name, value.length > SHOWN_CHARS ? `${value.slice(0, SHOWN_CHARS)}…` : value] as const)
    const files = notice.files.map((file) => `${file.filename || '(no name)'} (${file.size} bytes, field ${file.field})`)
    const text =
      `A new submission of the form "${notice.form}" on ${site.name}, ${notice.createdAt}:\n\n` +
      rows.map(([name, value]) => `${name}: ${value}`).join('\n') +
      (files.length > 0 ? `\n\nFiles:\n${files.join('\n')}` : '') +
      `\n\nSee every submission: ${link}\n`
    const html =
      `<p>A new submission of the form <strong>${escapeHtml(notice.form)}</strong> on ${escapeHtml(site.name)}, ${escapeHtml(notice.createdAt)}:</p>` +
      `<table>${rows.map(([name, value]) => `<tr><th align="left" valign="top">${escapeHtml(name)}</th><td style="white-space:pre-wrap">${escapeHtml(value)}</td></tr>`).join('')}</table>` +
      (files.length > 0 ? `<p>Files:</p><ul>${files.map((file) => `<li>${escapeHtml(file)}</li>`).join('')}</ul>` : '') +
      `<p><a href="${escapeHtml(link)}">See every submission</a></p>`
    await this.deliver({
      to,
      ...(notice.email !== null ? { replyTo: notice.email } : {}),
      subject: oneLine(`New ${notice.form} submission on ${site.name}`),
      text,
      html,
    })
  }
}

/** Notices for an instance without SMTP: nobody is told. */
export const NO_NOTICES: SubmissionNotices = { submitted: () => {} }
