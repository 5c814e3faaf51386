/**
 * Versions as callers name them, in paths, tool arguments and `baseVersion`: by id (`job_…`) or
 * by number (an integer, or its decimal digits). Every lookup of a version a caller names goes
 * through requireVersion, so each answers an unknown one alike.
 */
import { AppError } from '../core/errors.ts'
import { VERSION_NUMBER_MAX, versionNumberOf } from '../core/ids.ts'
import { quoted } from '../core/text.ts'
import type { VersionRow } from '../db/types.ts'
import type { WebsitesRepository } from './websites.repository.ts'

export type VersionRef = string | number

/**
 * The version of the website the ref names; NOT_FOUND when it has none such. A number past
 * VERSION_NUMBER_MAX names no version, and is answered so without asking the database (which
 * could not compare it with a 32-bit column).
 */
export async function requireVersion(
  repo: Pick<WebsitesRepository, 'findVersion' | 'findVersionByNumber'>,
  websiteId: string,
  ref: VersionRef,
): Promise<VersionRow> {
  const number = typeof ref === 'number' ? ref : versionNumberOf(ref)
  if (number === null) {
    const version = await repo.findVersion(websiteId, String(ref))
    if (version) return version
    throw new AppError('NOT_FOUND', `Version ${quoted(String(ref), 60)} not found: give a version id (job_...) or a version number of this website.`)
  }
  const version = number <= VERSION_NUMBER_MAX ? await repo.findVersionByNumber(websiteId, number) : undefined
  if (version) return version
  throw new AppError('NOT_FOUND', `This website has no version ${String(ref)}.`)
}
