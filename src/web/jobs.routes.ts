/**
 * A publish job's status page, where a job's `statusUrl` (`/jobs/{jobId}`) leads: for the site's
 * owner and editors, the job's status and the version it made (message, publisher, time), with
 * links to the version's preview, the live site and the site's dashboard page. Anyone else gets
 * the 404 of an unknown job; signed out, the browser is sent to sign in and back.
 */
import type { FastifyInstance } from 'fastify'
import type { JobStatus } from '../core/enums.ts'
import type { JobDetails } from '../websites/job-details.ts'
import { accountOf, principalOf } from './forms.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export interface JobPageServices {
  jobDetails: JobDetails
}

/** Each job status in words. */
const STATUS_TEXT: Record<JobStatus, string> = {
  pending: 'Waiting to start',
  claimed: 'Starting',
  generating: 'In progress',
  ready: 'Published',
  retry: 'Waiting to be tried again',
  dead: 'Failed',
}

export function jobRoutes(web: WebContext, services: JobPageServices) {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get<{ Params: { jobId: string } }>('/jobs/:jobId', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const detail = await services.jobDetails.find(principalOf(account), request.params.jobId)
      const data = { title: `${detail.website.name} v${detail.version.number} · Plinth`, ...detail, statusText: STATUS_TEXT[detail.job.status] }
      return sendPage(reply, pageContext(web, request, reply), 'job', data)
    })
  }
}
