/**
 * Versions as callers name them, in paths and in `baseVersion`: by id (`job_…`) or by number
 * (an integer, or its decimal digits in a path segment).
 */
import { notFound } from '../core/errors.ts'
import type { VersionRow } from '../db/types.ts'
import type { WebsitesRepository } from './websites.repository.ts'

export type VersionRef = string | number

const DIGITS = /^[1-9][0-9]{0,9}$/

/** The version of the website the ref names; NOT_FOUND when it has none such. */
export async function requireVersion(
  repo: Pick<WebsitesRepository, 'findVersion' | 'findVersionByNumber'>,
  websiteId: string,
  ref: VersionRef,
): Promise<VersionRow> {
  const version = typeof ref === 'number' || DIGITS.test(ref) ? await repo.findVersionByNumber(websiteId, Number(ref)) : await repo.findVersion(websiteId, ref)
  if (!version) throw notFound(`Version ${JSON.stringify(ref)}`)
  return version
}
