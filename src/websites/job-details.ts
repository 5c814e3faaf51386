/**
 * Publish jobs: a job as getJob answers it (REST and MCP), and as its status page (the job's
 * `statusUrl`) shows it, with its website and the version it made, who published it and when.
 * Owners and editors only: for anyone else the job is not found, exactly as an unknown id.
 */
import type { Principal } from '../core/principal.ts'
import type { Config } from '../config.ts'
import { notFound } from '../core/errors.ts'
import { pageUrlFor } from '../core/site-address.ts'
import type { VisibleJobRow, WebsitesRepository } from './websites.repository.ts'
import type { Job } from './websites.schemas.ts'
import { jobView, livePageUrl } from './websites.views.ts'

export interface JobDetail {
  job: Job
  website: { id: string; name: string; slug: string; pageUrl?: string }
  version: {
    number: number
    /** The publish's message; null when none was given. */
    instruction: string | null
    /** Whether the site serves this version now. */
    isCurrent: boolean
    previewUrl: string
    publishedBy: { name: string | null; email: string }
    createdAt: string
  }
}

export class JobDetails {
  constructor(
    private readonly config: Config,
    private readonly repo: Pick<WebsitesRepository, 'findVisibleJob'>,
  ) {}

  async getJob(principal: Principal, jobId: string): Promise<Job> {
    return jobView(this.config, await this.requireJob(principal, jobId))
  }

  async find(principal: Principal, jobId: string): Promise<JobDetail> {
    const row = await this.requireJob(principal, jobId)
    return {
      job: jobView(this.config, row),
      website: { id: row.website_id, name: row.website_name, slug: row.slug, ...livePageUrl(this.config, row) },
      version: {
        number: row.number,
        instruction: row.instruction,
        isCurrent: row.id === row.current_version_id,
        previewUrl: pageUrlFor(this.config, row.slug, row.number),
        publishedBy: { name: row.publisher_name, email: row.publisher_email },
        createdAt: row.created_at,
      },
    }
  }

  private async requireJob(principal: Principal, jobId: string): Promise<VisibleJobRow> {
    const row = await this.repo.findVisibleJob(principal, jobId)
    if (!row) throw notFound('Job')
    return row
  }
}
