/**
 * A site's form inbox on the dashboard: per form, the submissions newest first, a page at a time,
 * with search, marking as spam, deleting and the CSV export; the site page links to each form.
 * Everything a visitor sent is shown through the views' escaping, never as markup. The forms page
 * also has the site's form settings (who is e-mailed, each submission or a daily digest, how long
 * submissions are kept), which its owner changes and editors read, and the erasure of
 * everything a visitor sent from one address.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Account } from '../auth/accounts.service.ts'
import { FORM_NOTIFY_MAX_ADDRESSES, FORM_RETENTION_MAX_DAYS } from '../core/limits.ts'
import { AppError } from '../core/errors.ts'
import type { FormNotifyMode } from '../core/enums.ts'
import type { FormsService } from '../forms/forms.service.ts'
import { statusOf } from '../http/error-status.ts'
import { accountOf, field, fieldRefusal, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface FormInboxServices {
  forms: FormsService
}

type ListParams = { Params: { websiteId: string }; Querystring: { done?: string; erased?: string } }
type InboxParams = { Params: { websiteId: string; name: string }; Querystring: { q?: string; cursor?: string; done?: string } }
type SubmissionParams = { Params: { websiteId: string; name: string; submissionId: string } }

const NOTICES: Record<string, string> = {
  spam: 'The submission was marked as spam.',
  'not-spam': 'The submission is no longer marked as spam.',
  deleted: 'The submission was deleted.',
  settings: 'The form settings are saved.',
}

/** What the settings form's fields are called next to their problems. */
const SETTING_LABELS: Record<string, string> = { notify: 'The list of addresses', retentionDays: 'The number of days', notifyMode: 'How often' }

/** Addresses typed one per line or separated by commas (or spaces, or semicolons); none typed is null: the owner's. */
const addressesOf = (text: string): string[] | null => {
  const addresses = text.split(/[\s,;]+/).filter((address) => address !== '')
  return addresses.length === 0 ? null : addresses
}

const erasedNotice = (count: string) =>
  count === '0'
    ? 'No submission of this site came from that address: nothing was deleted.'
    : `Deleted ${count} submission${count === '1' ? '' : 's'} sent from that address, with their files.`

export function formInboxRoutes(web: WebContext, { forms }: FormInboxServices) {
  const listPath = (websiteId: string) => `/dashboard/sites/${encodeURIComponent(websiteId)}/forms`
  const inboxPath = (websiteId: string, name: string) => `${listPath(websiteId)}/${encodeURIComponent(name)}`

  /** The forms page: the site's forms, its form settings (a form for the owner) and the erasure. */
  const formsPage = async (request: FastifyRequest<ListParams>, reply: FastifyReply, account: Account, extra: Record<string, unknown> = {}, status = 200) => {
    const principal = principalOf(account)
    const { websiteId } = request.params
    const [list, { settings, role }] = await Promise.all([forms.listForms(principal, websiteId), forms.settingsAndRole(principal, websiteId)])
    const { done, erased } = request.query
    const data = {
      title: 'Forms · Plinth',
      websiteId,
      forms: list.items,
      settings,
      owner: role === 'owner',
      ownerEmail: role === 'owner' ? account.email : null,
      mailOff: web.config.smtpUrl === null,
      typed: {
        notify: settings.notify?.join('\n') ?? '',
        notifyMode: settings.notifyMode,
        retention: settings.retentionDays === null ? 'forever' : 'days',
        retentionDays: settings.retentionDays ?? '',
      },
      maxAddresses: FORM_NOTIFY_MAX_ADDRESSES,
      maxDays: FORM_RETENTION_MAX_DAYS,
      notice: erased !== undefined && /^\d{1,9}$/.test(erased) ? erasedNotice(erased) : done ? NOTICES[done] : undefined,
      ...extra,
    }
    return sendPage(reply, pageContext(web, request, reply), 'form-list', data, { status })
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<ListParams>('/dashboard/sites/:websiteId/forms', { schema: { hide: true } }, async (request, reply) =>
      formsPage(request, reply, accountOf(request)),
    )

    app.post<ListParams>('/dashboard/sites/:websiteId/forms/settings', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const typed = {
        notify: field(request, 'notify'),
        notifyMode: field(request, 'notifyMode'),
        retention: field(request, 'retention'),
        retentionDays: field(request, 'retentionDays'),
      }
      const settings = {
        notify: addressesOf(typed.notify),
        notifyMode: (typed.notifyMode || undefined) as FormNotifyMode | undefined,
        retentionDays: typed.retention === 'forever' ? null : Number(typed.retentionDays || Number.NaN),
      }
      try {
        await forms.updateSettings(principalOf(account), request.params.websiteId, settings)
      } catch (error) {
        const refused = error instanceof AppError && error.code === 'VALIDATION_FAILED' ? error : null
        if (!refused) throw error
        const errors = Object.fromEntries(Object.entries(refused.fields ?? {}).map(([name, problem]) => [name, `${SETTING_LABELS[name] ?? name} ${problem}.`]))
        const settingsError = { message: 'The settings were not saved: correct what is marked below.', fields: errors }
        return formsPage(request, reply, account, { settingsError, typed }, statusOf(refused))
      }
      return reply.redirect(`${listPath(request.params.websiteId)}?done=settings`, 303)
    })

    app.post<ListParams>('/dashboard/sites/:websiteId/forms/erasures', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const principal = principalOf(account)
      const email = field(request, 'email')
      let deleted: number
      try {
        deleted = (await forms.deleteByEmail(principal, request.params.websiteId, email)).deleted
      } catch (error) {
        const refused = fieldRefusal(error, 'email')
        if (!refused) throw error
        const eraseError = { message: `The address ${refused.fields!.email}.` }
        return formsPage(request, reply, account, { eraseError, erasing: email }, statusOf(refused))
      }
      return reply.redirect(`${listPath(request.params.websiteId)}?erased=${deleted}`, 303)
    })

    app.get<InboxParams>('/dashboard/sites/:websiteId/forms/:name', { schema: { hide: true } }, async (request, reply) => {
      const principal = principalOf(accountOf(request))
      const { websiteId, name } = request.params
      const q = request.query.q?.trim().slice(0, 200) || undefined
      const page = await forms.listSubmissions(principal, websiteId, name, { q, cursor: request.query.cursor || undefined, limit: 20 })
      const list = await forms.listForms(principal, websiteId)
      const form = list.items.find((f) => f.name === name)
      const columns = [...new Set([...(form?.fields ?? []).map((f) => f.name), ...page.items.flatMap((s) => Object.keys(s.data))])]
      return sendPage(reply, pageContext(web, request, reply), 'form-inbox', {
        title: `${name} · Forms · Plinth`,
        websiteId,
        form: { name, submissions: form?.submissions ?? 0, live: form?.live ?? false },
        columns,
        submissions: page.items.map((s) => ({ ...s, values: columns.map((column) => s.data[column] ?? '') })),
        q: q ?? '',
        nextCursor: page.nextCursor,
        notice: request.query.done ? NOTICES[request.query.done] : undefined,
        csvUrl: `${inboxPath(websiteId, name)}/submissions.csv`,
      })
    })

    app.get<InboxParams>('/dashboard/sites/:websiteId/forms/:name/submissions.csv', { schema: { hide: true } }, async (request, reply) => {
      const { filename, csv } = await forms.exportCsv(principalOf(accountOf(request)), request.params.websiteId, request.params.name)
      return reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${filename}"`).send(csv)
    })

    app.post<SubmissionParams>('/dashboard/sites/:websiteId/forms/:name/submissions/:submissionId/spam', { schema: { hide: true } }, async (request, reply) => {
      const { websiteId, name, submissionId } = request.params
      const spam = field(request, 'spam') === 'true'
      await forms.setSpam(principalOf(accountOf(request)), websiteId, name, submissionId, spam)
      return reply.redirect(`${inboxPath(websiteId, name)}?done=${spam ? 'spam' : 'not-spam'}`, 303)
    })

    app.post<SubmissionParams>(
      '/dashboard/sites/:websiteId/forms/:name/submissions/:submissionId/delete',
      { schema: { hide: true } },
      async (request, reply) => {
        const { websiteId, name, submissionId } = request.params
        await forms.deleteSubmission(principalOf(accountOf(request)), websiteId, name, submissionId)
        return reply.redirect(`${inboxPath(websiteId, name)}?done=deleted`, 303)
      },
    )
  }
}
