import type { Principal } from '../core/principal.ts'
import { AppError, notFound, validationFailed } from '../core/errors.ts'
import { newId, nowIso } from '../core/ids.ts'
import { MAX_COLLECTIONS } from '../core/limits.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import { isUniqueViolation } from '../db/connect.ts'
import type { CollectionRow } from '../db/types.ts'
import { collectionOwning, RESERVED_COLLECTION_NAMES, reservedPathsOf } from '../publishing/reserved-paths.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { CollectionsRepository, CollectionWithCount } from './collections.repository.ts'
import { type Collection, type CollectionCreate, type CollectionUpdate, type Field, parseFields } from './content.schemas.ts'

/** A collection as the entries service needs it: its row with parsed fields. */
export interface LoadedCollection {
  id: string
  websiteId: string
  /** The website's slug: what its changes are announced under (SiteEvents). */
  siteSlug: string
  name: string
  fields: Field[]
  removedFields: Field[]
}

export interface CollectionsServiceOptions {
  repo: CollectionsRepository
  access: WebsiteAccess
  /** Told after a collection changed: its label and fields shape its pages on the site. */
  siteEvents: SiteEvents
}

export class CollectionsService {
  constructor(private readonly options: CollectionsServiceOptions) {}

  async list(principal: Principal, websiteId: string): Promise<{ items: Collection[] }> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    return { items: (await this.options.repo.list(site.id)).map(collectionView) }
  }

  async get(principal: Principal, websiteId: string, name: string): Promise<Collection> {
    return collectionView((await this.requireRow(principal, websiteId, name, 'see')).row)
  }

  /**
   * The collection an entry operation works on, when the caller may do `permission` to its site;
   * 404 when the site or the collection is not visible.
   */
  async load(principal: Principal, websiteId: string, name: string, permission: 'see' | 'edit'): Promise<LoadedCollection> {
    const { site, row } = await this.requireRow(principal, websiteId, name, permission)
    return {
      id: row.id,
      websiteId: row.website_id,
      siteSlug: site.slug,
      name: row.name,
      fields: parseFields(row.fields),
      removedFields: parseFields(row.removed_fields),
    }
  }

  async create(principal: Principal, websiteId: string, input: CollectionCreate): Promise<Collection> {
    const site = await this.options.access.requireSite(principal, websiteId, 'edit')
    if (RESERVED_COLLECTION_NAMES.has(input.name)) {
      throw validationFailed({ name: `"${input.name}" is reserved for Plinth's own site paths; choose another name` })
    }
    assertFieldsValid(input.fields)
    if ((await this.options.repo.count(site.id)) >= MAX_COLLECTIONS) {
      throw new AppError('COLLECTION_LIMIT_REACHED', `This website already has ${MAX_COLLECTIONS} collections, the most it may have.`)
    }
    const clashing = (await this.options.repo.livePaths(site.id)).filter((path) => collectionOwning(path, [input.name]) !== null)
    if (clashing.length > 0) {
      const shown = clashing
        .slice(0, 10)
        .map((p) => `"${p}"`)
        .join(', ')
      throw new AppError(
        'COLLECTION_CONFLICT',
        `The collection "${input.name}" would serve its entries at /${input.name}-{slug}, but the live version has files there: ${shown}${clashing.length > 10 ? ', ...' : ''}. Choose another name, or publish a version without these files first.`,
        { fields: { name: `clashes with ${clashing.length} live file${clashing.length === 1 ? '' : 's'}: ${shown}` } },
      )
    }
    const at = nowIso()
    const row: CollectionRow = {
      id: newId('col'),
      website_id: site.id,
      name: input.name,
      label: input.label,
      fields: JSON.stringify(input.fields),
      removed_fields: '[]',
      created_at: at,
      updated_at: at,
    }
    try {
      await this.options.repo.insert(row)
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      throw new AppError('COLLECTION_EXISTS', `This website already has a collection named "${input.name}".`, {
        fields: { name: 'is already used by another collection of this website' },
      })
    }
    await this.options.siteEvents.siteChanged(site.slug)
    return collectionView({ ...row, entry_count: 0 })
  }

  /**
   * Changes label and fields. Stored values are never dropped: a removed field moves to
   * removedFields with its values kept; a retyped field (or a re-added one of another type) is
   * refused while entries hold values for it, as Webflow and Contentful refuse type changes.
   */
  async update(principal: Principal, websiteId: string, name: string, input: CollectionUpdate): Promise<Collection> {
    const { site, row } = await this.requireRow(principal, websiteId, name, 'edit')
    const changes: Partial<CollectionRow> = { updated_at: nowIso() }
    if (input.label !== undefined) changes.label = input.label
    if (input.fields !== undefined) {
      assertFieldsValid(input.fields)
      const previous = [...parseFields(row.removed_fields), ...parseFields(row.fields)]
      const typeBefore = new Map(previous.map((f) => [f.name, f.type]))
      for (const [i, field] of input.fields.entries()) {
        if (typeBefore.get(field.name) === field.type) continue
        const holding = await this.options.repo.countHoldingValue(row.id, field.name)
        if (holding > 0) {
          const was = typeBefore.get(field.name)
          throw new AppError(
            'FIELD_IN_USE',
            `${holding} entr${holding === 1 ? 'y holds' : 'ies hold'} values for "${field.name}"${was ? ` stored as ${was}` : ''}; changing it to ${field.type} could make them invalid. Add a new field instead, move the values with upsertEntries, then remove the old one.`,
            { fields: { [`fields[${i}].type`]: `type cannot change while ${holding} entr${holding === 1 ? 'y holds' : 'ies hold'} values` } },
          )
        }
      }
      const kept = new Set(input.fields.map((f) => f.name))
      const removed = new Map(parseFields(row.removed_fields).map((f) => [f.name, f]))
      for (const field of parseFields(row.fields)) removed.set(field.name, field)
      for (const name of kept) removed.delete(name)
      changes.fields = JSON.stringify(input.fields)
      changes.removed_fields = JSON.stringify([...removed.values()])
    }
    await this.options.repo.update(row.id, changes)
    await this.options.siteEvents.siteChanged(site.slug)
    return collectionView({ ...row, ...changes })
  }

  private async requireRow(
    principal: Principal,
    websiteId: string,
    name: string,
    permission: 'see' | 'edit',
  ): Promise<{ site: VisibleWebsite; row: CollectionWithCount }> {
    const site = await this.options.access.requireSite(principal, websiteId, permission)
    const row = await this.options.repo.find(site.id, name)
    if (!row) throw notFound(`Collection "${name}"`)
    return { site, row }
  }
}

/** Rules between properties that a schema cannot say; every problem is reported at once. */
function assertFieldsValid(fields: Field[]): void {
  const problems: Record<string, string> = {}
  const seen = new Set<string>()
  fields.forEach((field, i) => {
    const at = `fields[${i}]`
    const key = field.name.toLowerCase()
    if (seen.has(key)) problems[`${at}.name`] = `"${field.name}" is used by another field (names are compared case-insensitively)`
    seen.add(key)
    if (field.type === 'choice' && !field.options) problems[`${at}.options`] = 'is required for a choice field'
    if (field.type !== 'choice' && field.options) problems[`${at}.options`] = 'is only for choice fields'
    if (field.type !== 'text' && field.maxLength !== undefined) problems[`${at}.maxLength`] = 'is only for text fields'
    for (const bound of ['min', 'max'] as const) {
      if (field.type !== 'number' && field[bound] !== undefined) problems[`${at}.${bound}`] = 'is only for number fields'
    }
    if (field.min !== undefined && field.max !== undefined && field.min > field.max) problems[`${at}.max`] = 'must not be less than min'
  })
  if (Object.keys(problems).length > 0) throw validationFailed(problems)
}

function collectionView(row: CollectionWithCount): Collection {
  return {
    id: row.id,
    name: row.name,
    label: row.label,
    fields: parseFields(row.fields),
    removedFields: parseFields(row.removed_fields),
    entryPath: `/${row.name}-{slug}`,
    reservedPaths: reservedPathsOf(row.name),
    entryCount: row.entry_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}
