/**
 * Claiming a site's address: whether a slug may be taken, the SLUG_TAKEN answer with a free
 * suggestion, derived slugs, and suggestSlug's answer. The rules of a slug itself live in
 * core/site-address.ts.
 */
import { AppError, validationFailed } from '../core/errors.ts'
import { randomBase62 } from '../core/ids.ts'
import { firstFreeSlug, normalizeSlug, pageUrlFor, RESERVED_SLUGS, SLUG_MAX, slugBase, slugProblem } from '../core/site-address.ts'
import { quoted } from '../core/text.ts'
import type { WebsitesRepository } from './websites.repository.ts'
import type { SlugSuggestion } from './websites.schemas.ts'

export interface SlugClaimsOptions {
  repo: Pick<WebsitesRepository, 'slugExists' | 'slugsStartingWith'>
  /** How this instance's site URLs look, for the page URL of a suggestion. */
  sites: { siteScheme: string; siteDomain: string }
}

export class SlugClaims {
  constructor(private readonly options: SlugClaimsOptions) {}

  /** suggestSlug: a verdict on the input, and the page URL the suggested slug would have. */
  async suggest(value: string): Promise<SlugSuggestion> {
    const verdict = await this.verdict(value)
    return { ...verdict, pageUrl: pageUrlFor(this.options.sites, verdict.suggestion) }
  }

  /** Whether the input itself is a valid, free slug, its normalized form, and an available slug derived from it. */
  private async verdict(value: string): Promise<Omit<SlugSuggestion, 'pageUrl'>> {
    const slug = normalizeSlug(value)
    // A valid input is its own normalized form; an invalid one is judged as given, not as normalized.
    const problem = slug === '' ? 'has no letters or digits to make a slug from' : slugProblem(value)
    const reserved = !problem && RESERVED_SLUGS.has(value)
    const available = !problem && !reserved && !(await this.options.repo.slugExists(value))
    const suggestion = available ? value : await this.freeSlugFor(value)
    let message: string | undefined
    if (problem)
      message = `${quoted(value, 60)} is not a valid slug: it ${problem}.${SlugClaims.normalizedFormClaimed(slug, suggestion)} "${suggestion}" is available.`
    else if (reserved) message = `"${value}" is reserved for the service itself. "${suggestion}" is available.`
    else if (!available) message = `"${value}" is already taken. "${suggestion}" is available.`
    return { slug, valid: !problem, available, suggestion, ...(message ? { message } : {}) }
  }

  /**
   * For an invalid input, a sentence saying its normalized form is already claimed, or ''. A valid
   * normalized form is its own derived base, so a suggestion other than it means it is not free.
   */
  private static normalizedFormClaimed(slug: string, suggestion: string): string {
    if (slug === suggestion || slugProblem(slug)) return ''
    const why = RESERVED_SLUGS.has(slug) ? 'is reserved for the service itself' : 'is already taken'
    return ` Its normalized form "${slug}" ${why}.`
  }

  /** A requested slug: VALIDATION_FAILED when malformed, SLUG_TAKEN (naming a free one) when taken or reserved. */
  async assertClaimable(slug: string): Promise<void> {
    const problem = slugProblem(slug)
    if (problem) throw validationFailed({ slug: problem })
    if (RESERVED_SLUGS.has(slug) || (await this.options.repo.slugExists(slug))) throw await this.takenError(slug)
  }

  async takenError(slug: string): Promise<AppError> {
    const suggestion = await this.freeSlugFor(slug)
    const why = RESERVED_SLUGS.has(slug) ? 'is reserved' : 'is already taken'
    return new AppError('SLUG_TAKEN', `The slug ${quoted(slug, 80)} ${why}. "${suggestion}" is available.`, {
      fields: { slug: `${why}; try "${suggestion}"` },
    })
  }

  /** The first free slug derived from a name or a draft slug: base, base-2, base-3, ... */
  async freeSlugFor(text: string): Promise<string> {
    const base = slugBase(text)
    return firstFreeSlug(base, await this.options.repo.slugsStartingWith(base.slice(0, 40)))
  }
}

/** `base-x7k2q9`: a derived slug that no concurrent create will pick too. */
export function randomSlugVariant(text: string): string {
  const base = slugBase(text)
  const suffix = `-${randomBase62(6).toLowerCase()}`
  return base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '') + suffix
}
