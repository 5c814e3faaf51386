/** The rows of the daily digest: the day an instance claims, and the submissions it tells of. */
import type { Kysely } from 'kysely'
import type { Database } from '../db/types.ts'

/** Submissions of one form of one site in a digest's day. */
export interface DigestForm {
  websiteId: string
  siteName: string
  /** JSON text of the addresses the site's submissions go to; null: the owner's. */
  notify: string | null
  ownerEmail: string
  form: string
  count: number
}

/** A submission shown in a digest. */
export interface DigestSample {
  websiteId: string
  form: string
  createdAt: string
  /** JSON text of field to value. */
  data: string
}

/** The most submissions read for a digest's samples: a busy day shows the newest, its counts are still whole. */
const SAMPLE_ROWS_READ = 2000

export class FormDigestRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Claims a day for this instance: true for the one instance whose row went in, false when another's was there. */
  async claim(day: string, now: string): Promise<boolean> {
    const result = await this.db
      .insertInto('form_digest_days')
      .values({ day, claimed_at: now, finished_at: null, messages: null })
      .onConflict((oc) => oc.column('day').doNothing())
      .returning('day')
      .executeTakeFirst()
    return result !== undefined
  }

  async finish(day: string, now: string, messages: number): Promise<void> {
    await this.db.updateTable('form_digest_days').set({ finished_at: now, messages }).where('day', '=', day).execute()
  }

  /** Per site on the daily digest and form: how many submissions (spam left out) came in [from, to). */
  async forms(from: string, to: string): Promise<DigestForm[]> {
    const rows = await this.db
      .selectFrom('form_submissions as s')
      .innerJoin('websites as w', 'w.id', 's.website_id')
      .innerJoin('users as u', 'u.id', 'w.owner_id')
      .select((eb) => [
        'w.id as websiteId',
        'w.name as siteName',
        'w.form_notify as notify',
        'u.email as ownerEmail',
        's.form',
        eb.fn.countAll<string | number>().as('count'),
      ])
      .where('w.form_notify_mode', '=', 'daily')
      .where('w.status', '!=', 'deleted')
      .where('s.spam', '=', 0)
      .where('s.created_at', '>=', from)
      .where('s.created_at', '<', to)
      .groupBy(['w.id', 'w.name', 'w.form_notify', 'u.email', 's.form'])
      .orderBy('w.name')
      .orderBy('s.form')
      .execute()
    return rows.map((row) => ({ ...row, count: Number(row.count) }))
  }

  /** The newest `perForm` submissions of each of these sites' forms in [from, to), spam left out. */
  async samples(websiteIds: string[], from: string, to: string, perForm: number): Promise<DigestSample[]> {
    if (websiteIds.length === 0) return []
    const rows = await this.db
      .selectFrom('form_submissions')
      .select(['website_id as websiteId', 'form', 'created_at as createdAt', 'data'])
      .where('website_id', 'in', websiteIds)
      .where('spam', '=', 0)
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(SAMPLE_ROWS_READ)
      .execute()
    const taken = new Map<string, number>()
    return rows.filter((row) => {
      const key = `${row.websiteId} ${row.form}`
      const n = taken.get(key) ?? 0
      taken.set(key, n + 1)
      return n < perForm
    })
  }
}
