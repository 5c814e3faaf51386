/**
 * A site's form inbox on the dashboard: per form, the submissions newest first, a page at a time,
 * with search, marking as spam, deleting and the CSV export; the site page links to each form.
 * Everything a visitor sent is shown through the views' escaping, never as markup.
 */
import type { FastifyInstance } from 'fastify'
import type { FormsService } from '../forms/forms.service.ts'
import { accountOf, field, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface FormInboxServices {
  forms: FormsService
}

type InboxParams = { Params: { websiteId: string; name: string }; Querystring: { q?: string; cursor?: string; done?: string } }
type SubmissionParams = { Params: { websiteId: string; name: string; submissionId: string } }

const NOTICES: Record<string, string> = {
  spam: 'The submission was marked as spam.',
  'not-spam': 'The submission is no longer marked as spam.',
  deleted: 'The submission was deleted.',
}

export function formInboxRoutes(web: WebContext, { forms }: FormInboxServices) {
  const inboxPath = (websiteId: string, name: string) => `/dashboard/sites/${encodeURIComponent(websiteId)}/forms/${encodeURIComponent(name)}`

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<{ Params: { websiteId: string } }>('/dashboard/sites/:websiteId/forms', { schema: { hide: true } }, async (request, reply) => {
      const principal = principalOf(accountOf(request))
      const list = await forms.listForms(principal, request.params.websiteId)
      return sendPage(reply, pageContext(web, request, reply), 'form-list', { title: 'Forms · Plinth', websiteId: request.params.websiteId, forms: list.items })
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
