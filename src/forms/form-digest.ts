/**
 * The daily digest of form submissions, for the sites whose owners chose it (`notifyMode:
 * daily`): once a day, after midnight UTC, the previous UTC day's submissions (spam left out), one
 * message per address for every site that e-mails it, each site's forms with how many came and
 * the newest few, values escaped in the HTML part. A day without submissions sends nothing.
 *
 * Every instance checks hourly (and at start); the first to insert the day's row in
 * form_digest_days sends it and the others see the row and send nothing, so a digest goes out
 * once however many instances share the database. An instance that stops while sending leaves
 * the day claimed: a digest is sent at most once, never twice.
 */
import type { SendMailOptions } from 'nodemailer'
import { escapeHtml } from '../core/html.ts'
import type { DigestForm, DigestSample, FormDigestRepository } from './form-digest.repository.ts'

export interface FormDigestOptions {
  repo: FormDigestRepository
  /** Sends one message from PLINTH_MAIL_FROM (form-mail.ts). */
  deliver(message: Omit<SendMailOptions, 'from'>): Promise<void>
  /** Where the dashboard shows a site's inbox: `{siteUrl}/dashboard/sites/{id}/forms/{form}`. */
  siteUrl: string
  log: { warn(obj: unknown, msg?: string): void }
}

/** What one run did: the day it looked at, whether this instance claimed it, how many messages it sent. */
export interface DigestRun {
  day: string
  claimed: boolean
  messages: number
}

/** Submissions shown per form in a digest; the inbox has them all. */
const SAMPLES_PER_FORM = 3
/** Longest answer shown in a digest line. */
const SAMPLE_VALUE_CHARS = 80
const SAMPLE_LINE_CHARS = 300
const DAY_MS = 24 * 60 * 60 * 1000

export class FormDigest {
  constructor(private readonly options: FormDigestOptions) {}

  /** Sends the digest of the UTC day before `now`, unless an instance already did (or is doing) it. */
  async run(now: Date): Promise<DigestRun> {
    const { repo } = this.options
    const to = `${now.toISOString().slice(0, 10)}T00:00:00.000Z`
    const from = new Date(Date.parse(to) - DAY_MS).toISOString()
    const day = from.slice(0, 10)
    if (!(await repo.claim(day, now.toISOString()))) return { day, claimed: false, messages: 0 }
    const forms = await repo.forms(from, to)
    const samples = await repo.samples([...new Set(forms.map((f) => f.websiteId))], from, to, SAMPLES_PER_FORM)
    let messages = 0
    for (const [address, sites] of byRecipient(forms)) {
      try {
        await this.options.deliver(this.message(day, address, sites, samples))
        messages++
      } catch (err) {
        this.options.log.warn({ err, day }, 'sending a daily digest of form submissions failed')
      }
    }
    await repo.finish(day, new Date().toISOString(), messages)
    return { day, claimed: true, messages }
  }

  private message(day: string, to: string, forms: DigestForm[], samples: DigestSample[]): Omit<SendMailOptions, 'from'> {
    const total = forms.reduce((sum, f) => sum + f.count, 0)
    const sites = [...new Map(forms.map((f) => [f.websiteId, f.siteName])).entries()]
    const sections = sites.map(([websiteId, name]) => ({
      name,
      forms: forms
        .filter((f) => f.websiteId === websiteId)
        .map((f) => ({
          form: f.form,
          count: f.count,
          link: `${this.options.siteUrl}/dashboard/sites/${websiteId}/forms/${f.form}`,
          lines: samples.filter((s) => s.websiteId === websiteId && s.form === f.form).map(sampleLine),
        })),
    }))
    const text =
      `Form submissions of ${day} (UTC): ${total} in all.\n\n` +
      sections
        .map(
          (site) =>
            `${site.name}\n` + site.forms.map((f) => `  ${f.form}: ${f.count} new, ${f.link}\n${f.lines.map((line) => `    - ${line}\n`).join('')}`).join(''),
        )
        .join('\n')
    const html =
      `<p>Form submissions of ${escapeHtml(day)} (UTC): ${total} in all.</p>` +
      sections
        .map(
          (site) =>
            `<h2>${escapeHtml(site.name)}</h2><ul>` +
            site.forms
              .map(
                (f) =>
                  `<li><a href="${escapeHtml(f.link)}">${escapeHtml(f.form)}</a>: ${f.count} new` +
                  (f.lines.length > 0 ? `<ul>${f.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>` : '') +
                  '</li>',
              )
              .join('') +
            '</ul>',
        )
        .join('')
    return { to, subject: `${total} form submission${total === 1 ? '' : 's'} on ${day}`, text, html }
  }
}

/** The forms each address is told of: a site's `notify` addresses, or its owner's. */
function byRecipient(forms: DigestForm[]): Map<string, DigestForm[]> {
  const to = new Map<string, DigestForm[]>()
  for (const form of forms) {
    const addresses = form.notify === null ? [form.ownerEmail] : (JSON.parse(form.notify) as string[])
    for (const address of addresses) to.set(address, [...(to.get(address) ?? []), form])
  }
  return to
}

/** A submission on one line: its time and its answers, each cut short. */
function sampleLine(sample: DigestSample): string {
  const data = JSON.parse(sample.data) as Record<string, string>
  const answers = Object.entries(data).map(([name, value]) => {
    const flat = value.replace(/\s+/g, ' ')
    return `${name}: ${flat.length > SAMPLE_VALUE_CHARS ? `${flat.slice(0, SAMPLE_VALUE_CHARS)}…` : flat}`
  })
  const line = `${sample.createdAt.slice(11, 16)} ${answers.join(' · ')}`
  return line.length > SAMPLE_LINE_CHARS ? `${line.slice(0, SAMPLE_LINE_CHARS)}…` : line
}
