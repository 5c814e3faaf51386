/** Table types of forms for Kysely (db/types.ts puts them in the Database). */
import type { Generated, Selectable } from 'kysely'

/** A form a version's pages declare. */
export interface VersionFormsTable {
  version_id: string
  name: string
  /** JSON text of FormField[]. */
  fields: string
}

/** One post a visitor made to a site's form. */
export interface FormSubmissionsTable {
  /** `sub_...` */
  id: string
  website_id: string
  form: string
  /** The version that took it (null once that version is gone). */
  version_id: string | null
  created_at: string
  /** JSON text of {field: value}. */
  data: string
  /** The sender's address when a field gave a valid one, lowercased. */
  email: string | null
  /** 1 when the owner marked it as spam. */
  spam: Generated<number>
}

/** A file sent with a submission, kept as a blob. */
export interface FormFilesTable {
  submission_id: string
  position: number
  field: string
  filename: string
  content_type: string
  size: number
  hash: string
}

/** A day whose form digest an instance claimed (and, once `finished_at` is set, sent). */
export interface FormDigestDaysTable {
  /** UTC date, YYYY-MM-DD. */
  day: string
  claimed_at: string
  finished_at: string | null
  messages: number | null
}

export type FormSubmissionRow = Selectable<FormSubmissionsTable>
export type FormFileRow = Selectable<FormFilesTable>
