import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../db/types.ts'
import type { ServedFile, ServedVersion, SiteLookup } from './site-lookup.ts'

/** The columns of a served file, as a version's and a draft's file rows both name them (aliased `f`). */
const FILE_COLUMNS = [
  'f.path',
  'f.hash',
  'f.size',
  'f.content_type as contentType',
  'blobs.br_size as brSize',
  'blobs.gzip_size as gzipSize',
  'blobs.variants_type as variantsType',
] as const

/** Resolves a slug (and optionally a version number, or a draft) to the manifest that serving needs. */
export class DbSiteLookup implements SiteLookup {
  constructor(private readonly db: Kysely<Database>) {}

  findLive(slug: string): Promise<ServedVersion | null> {
    return this.find(slug, null)
  }

  findVersion(slug: string, number: number): Promise<ServedVersion | null> {
    return this.find(slug, number)
  }

  private async find(slug: string, number: number | null): Promise<ServedVersion | null> {
    let query = this.db
      .selectFrom('websites')
      .innerJoin('versions', 'versions.website_id', 'websites.id')
      .select([
        'websites.id as websiteId',
        'websites.slug',
        'versions.id as versionId',
        'versions.number',
        'websites.password_set_at as lockedSince',
        'versions.preview_expires_at as previewExpiresAt',
        'websites.current_version_id as currentVersionId',
      ])
      .where('websites.slug', '=', slug)
      .where('websites.status', '!=', 'deleted')
      .where('versions.status', '=', 'ready')
    query = number === null ? query.whereRef('versions.id', '=', 'websites.current_version_id') : query.where('versions.number', '=', number)
    const found = await query.executeTakeFirst()
    if (!found) return null
    const { previewExpiresAt, currentVersionId, ...version } = found
    // A preview may have an expiry (approvals/promotion-schedules.ts); the live version is served as long as it is live.
    const expiresAt = number !== null && version.versionId !== currentVersionId ? previewExpiresAt : null
    const [rows, forms] = await Promise.all([
      this.db
        .selectFrom('version_files as f')
        .innerJoin('blobs', 'blobs.hash', 'f.hash')
        .select(FILE_COLUMNS)
        .where('f.version_id', '=', version.versionId)
        .execute(),
      this.db.selectFrom('version_forms').select('name').where('version_id', '=', version.versionId).execute(),
    ])
    return { ...version, number: Number(version.number), files: servedFiles(rows), forms: forms.map((form) => form.name), expiresAt }
  }

  /** The draft of this slug's site, expired or not (serving compares `expiresAt` with its own clock). */
  async findDraft(slug: string, draftId: string): Promise<ServedVersion | null> {
    const draft = await this.db
      .selectFrom('drafts')
      .innerJoin('websites', 'websites.id', 'drafts.website_id')
      .innerJoin('versions', 'versions.id', 'drafts.base_version_id')
      .select(['websites.id as websiteId', 'websites.slug', 'versions.number', 'websites.password_set_at as lockedSince', 'drafts.expires_at as expiresAt'])
      .where('drafts.id', '=', draftId)
      .where('websites.slug', '=', slug)
      .where('websites.status', '!=', 'deleted')
      .executeTakeFirst()
    if (!draft) return null
    const rows = await this.db
      .selectFrom('draft_files as f')
      .innerJoin('blobs', 'blobs.hash', 'f.hash')
      .select(FILE_COLUMNS)
      .where('f.draft_id', '=', draftId)
      .orderBy('f.path')
      .execute()
    const files = servedFiles(rows)
    return { ...draft, number: Number(draft.number), versionId: `${draftId}.${digestOf(files)}`, files }
  }
}

type FileRow = Omit<ServedFile, 'variantsPending'> & { variantsType: string | null }

/** File rows as serving takes them (PostgreSQL's driver returns a bigint size as text). */
function servedFiles(rows: FileRow[]): ServedFile[] {
  return rows.map(({ variantsType, ...f }) => ({ ...f, size: Number(f.size), variantsPending: variantsType !== null }))
}

/** A digest of a draft's files (in path order): what is served at each path, as the caches key it. */
function digestOf(files: readonly ServedFile[]): string {
  const digest = createHash('sha256')
  for (const file of files) digest.update(`${file.path}\0${file.hash}\0${file.contentType}\n`)
  return digest.digest('hex').slice(0, 20)
}
