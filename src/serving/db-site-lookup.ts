import type { Kysely } from 'kysely'
import type { Database } from '../db/types.ts'
import type { ServedVersion, SiteLookup } from './site-lookup.ts'

/** Resolves a slug (and optionally a version number) to the manifest that serving needs. */
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
      .select(['websites.id as websiteId', 'websites.slug', 'versions.id as versionId', 'versions.number', 'websites.password_set_at as lockedSince'])
      .where('websites.slug', '=', slug)
      .where('websites.status', '!=', 'deleted')
      .where('versions.status', '=', 'ready')
    query = number === null ? query.whereRef('versions.id', '=', 'websites.current_version_id') : query.where('versions.number', '=', number)
    const version = await query.executeTakeFirst()
    if (!version) return null
    const files = await this.db
      .selectFrom('version_files')
      .innerJoin('blobs', 'blobs.hash', 'version_files.hash')
      .select([
        'version_files.path',
        'version_files.hash',
        'version_files.size',
        'version_files.content_type as contentType',
        'blobs.br_size as brSize',
        'blobs.gzip_size as gzipSize',
        'blobs.variants_type as variantsType',
      ])
      .where('version_files.version_id', '=', version.versionId)
      .execute()
    return {
      ...version,
      number: Number(version.number),
      files: files.map(({ variantsType, ...f }) => ({ ...f, size: Number(f.size), variantsPending: variantsType !== null })),
    }
  }
}
