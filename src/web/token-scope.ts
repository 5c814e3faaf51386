/**
 * The choice of what a token may do and which sites it reaches, as the token page and the OAuth
 * consent page offer it: one box per capability and one per site of the person
 * (views/token-scope.liquid), read back into what TokensService.checkScope checks.
 */
import type { FastifyRequest } from 'fastify'
import type { Account } from '../auth/accounts.service.ts'
import type { ScopeInput } from '../auth/tokens.service.ts'
import { CAPABILITIES, type Capability } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'
import type { WebsiteQueries } from '../websites/website-queries.ts'
import { checked, field, principalOf } from './forms.ts'

/** What each capability lets a token do, as the pages say it (docs/guide/tokens.md says the same). */
export const CAPABILITY_LABELS: Readonly<Record<Capability, string>> = {
  read: 'Read: list and look at sites, versions, drafts, entries',
  preview: 'Preview: drafts and versions that do not go live',
  promote: 'Promote: publish live, promote and roll back, create sites',
  content: 'Content: write collections and entries',
  forms: 'Forms: read and handle form submissions',
  manage: 'Manage: site password, webhooks, deletion, settings',
}

/** The boxes of the capabilities, ticked as given (every one when `ticked` is null). */
export const capabilityChoices = (ticked: readonly Capability[] | null) =>
  CAPABILITIES.map((value) => ({ value, label: CAPABILITY_LABELS[value], checked: ticked === null || ticked.includes(value) }))

/** The boxes of the person's sites, ticked as given. */
export async function siteChoices(websites: Pick<WebsiteQueries, 'list'>, account: Account, ticked: readonly string[] = []) {
  const { items } = await websites.list(principalOf(account))
  return items.map((site) => ({ value: site.id, label: site.slug ? `${site.name} (${site.slug})` : site.name, checked: ticked.includes(site.id) }))
}

/**
 * The scope a form asks for. A form that offers the boxes says so with the field `scoped`: then
 * the ticked capabilities are what the token may do (at least one), and the ticked sites what it
 * reaches (none: every site). A form without them asks for no limit.
 */
export function chosenScope(request: FastifyRequest): ScopeInput & { capabilities: string[]; sites: string[] } {
  if (field(request, 'scoped') !== '1') return { capabilities: [], sites: [] }
  const capabilities = checked(request, 'capabilities')
  if (capabilities.length === 0) {
    throw new AppError('VALIDATION_FAILED', 'Tick at least one thing it may do.', { fields: { capabilities: 'tick at least one' } })
  }
  return { capabilities, sites: checked(request, 'sites') }
}
