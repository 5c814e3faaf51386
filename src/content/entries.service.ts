import { createHash } from 'node:crypto'
import type { Principal } from '../core/principal.ts'
import { AppError, notFound, validationFailed } from '../core/errors.ts'
import { newId, nowIso } from '../core/ids.ts'
import { ENTRY_PAGE_DEFAULT, RICH_TEXT_BATCH_MAX_CHARS } from '../core/limits.ts'
import { quoted } from '../core/text.ts'
import { isUniqueViolation } from '../db/connect.ts'
import type { EntryRow } from '../db/types.ts'
import type { SiteEvents } from '../serving/site-events.ts'
import type { WebhookEvents } from '../webhooks/webhook-events.ts'
import type { CollectionsService, LoadedCollection } from './collections.service.ts'
import type { Entry, EntryBatchRequest, EntryBatchResult, EntryList, EntryPut, EntryResult } from './content.schemas.ts'
import type { EntryMedia } from './entries.media.ts'
import { renderEntry } from './entries.render.ts'
import type { AlsoRecord, EntriesRepository } from './entries.repository.ts'
import { baseUrlProblem, type CheckedEntry, checkEntry, EntryFailure, slugProblem } from './entries.validation.ts'
import { canonicalJson, decodeCursor, encodeCursor, entryView } from './entries.views.ts'

/**
 * Batch items in progress at once: image imports overlap, and rich text asked for together goes to
 * a rendering thread in one message (rich-text.pool.ts); the pool, not this, bounds the CPU used.
 */
const BATCH_CONCURRENCY = 16

interface Written {
  status: 'created' | 'updated' | 'unchanged'
  row: EntryRow
}

/** A checked and rendered entry waiting to be stored. */
interface Pending {
  slug: string
  existing: EntryRow | undefined
  stored: Omit<EntryRow, 'id' | 'collection_id' | 'slug'>
}

export interface EntriesServiceOptions {
  collections: CollectionsService
  repo: EntriesRepository
  media: EntryMedia
  /** Told after entries of a website changed, so its site shows them on the next request. */
  siteEvents: SiteEvents
  /** Told of each entry created, updated or deleted, in the transaction that writes it (`entry.changed`). */
  webhookEvents: WebhookEvents
}

type EntryChange = 'created' | 'updated' | 'deleted'

export class EntriesService {
  constructor(private readonly options: EntriesServiceOptions) {}

  async list(principal: Principal, websiteId: string, name: string, query: { cursor?: string; limit?: number }): Promise<EntryList> {
    const collection = await this.options.collections.load(principal, websiteId, name, 'see')
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
    const limit = query.limit ?? ENTRY_PAGE_DEFAULT
    const rows = await this.options.repo.page(collection.id, limit + 1, after)
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    const now = nowIso()
    return {
      items: page.map((row) => entryView(collection, row, now)),
      nextCursor: rows.length > limit && last ? encodeCursor({ publishedAt: last.published_at, id: last.id }) : null,
    }
  }

  async get(principal: Principal, websiteId: string, name: string, entry: string): Promise<Entry> {
    const collection = await this.options.collections.load(principal, websiteId, name, 'see')
    return entryView(collection, await this.requireEntry(collection, entry), nowIso())
  }

  async delete(principal: Principal, websiteId: string, name: string, entry: string): Promise<void> {
    const collection = await this.options.collections.load(principal, websiteId, name, 'edit')
    const row = await this.requireEntry(collection, entry)
    if (!(await this.options.repo.delete(collection.id, row.id, this.changed(collection, [[row, 'deleted']])))) throw notFound(`Entry "${entry}"`)
    await this.options.siteEvents.siteChanged(collection.siteSlug)
  }

  /** Creates or replaces the entry at `slug`; sending the same entry again changes nothing. */
  async put(principal: Principal, websiteId: string, name: string, slug: string, input: EntryPut): Promise<{ status: Written['status']; entry: Entry }> {
    const collection = await this.options.collections.load(principal, websiteId, name, 'edit')
    const problem = slugProblem(slug)
    if (problem) throw validationFailed({ slug: problem })
    const baseProblem = baseUrlProblem(input.baseUrl)
    if (baseProblem) throw validationFailed({ baseUrl: baseProblem })
    const { baseUrl, ...item } = input
    try {
      const written = await this.write(principal, collection, { ...item, slug }, baseUrl, await this.options.repo.findBySlug(collection.id, slug))
      if (written.status !== 'unchanged') await this.options.siteEvents.siteChanged(collection.siteSlug)
      return { status: written.status, entry: entryView(collection, written.row, nowIso()) }
    } catch (error) {
      if (!(error instanceof EntryFailure)) throw error
      const code = error.code === 'IMAGE_IMPORT_FAILED' || error.code === 'RICH_TEXT_TOO_COSTLY' ? error.code : 'VALIDATION_FAILED'
      throw new AppError(code, error.message, { fields: error.fields })
    }
  }

  /** Writes up to 100 entries; each item gets its own result, in input order. Not all-or-nothing. */
  async upsert(principal: Principal, websiteId: string, name: string, input: EntryBatchRequest): Promise<EntryBatchResult> {
    const collection = await this.options.collections.load(principal, websiteId, name, 'edit')
    const baseProblem = baseUrlProblem(input.baseUrl)
    if (baseProblem) throw validationFailed({ baseUrl: baseProblem })
    const slugs = input.entries.map((item) => (typeof item.slug === 'string' ? item.slug : null))
    const occurrences = new Map<string, number>()
    for (const slug of slugs) if (slug !== null) occurrences.set(slug, (occurrences.get(slug) ?? 0) + 1)
    const stored = new Map(
      (
        await this.options.repo.findBySlugs(
          collection.id,
          [...occurrences.keys()].filter((s) => !slugProblem(s)),
        )
      ).map((r) => [r.slug, r]),
    )

    const overBudget = richTextOverBudget(input.entries)

    const results = new Array<EntryResult>(input.entries.length)
    const pending = new Map<number, Pending>()
    let next = 0
    const worker = async () => {
      while (next < input.entries.length) {
        const i = next++
        const slug = slugs[i]!
        try {
          if (slug !== null && occurrences.get(slug)! > 1) {
            throw new EntryFailure(
              'DUPLICATE_SLUG',
              `The slug ${quoted(slug, 60)} appears ${occurrences.get(slug)} times in this batch; send each slug once. None of its items was written.`,
              { slug: 'appears more than once in this batch' },
            )
          }
          if (overBudget.has(i)) {
            throw new EntryFailure(
              'RICH_TEXT_BUDGET_EXCEEDED',
              `This batch holds more than ${RICH_TEXT_BATCH_MAX_CHARS} characters of rich text in all; this item and the ones after it that carry rich text were not written. Send them in another batch.`,
              { data: `rich text past the batch's budget of ${RICH_TEXT_BATCH_MAX_CHARS} characters` },
            )
          }
          const prepared = await this.prepare(principal, collection, input.entries[i], input.baseUrl, slug === null ? undefined : stored.get(slug))
          if ('status' in prepared) results[i] = { slug, status: prepared.status, entry: entryView(collection, prepared.row, nowIso()) }
          else pending.set(i, prepared)
        } catch (error) {
          if (!(error instanceof EntryFailure)) throw error
          results[i] = { slug, status: 'failed', error: error.toResult() }
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, input.entries.length) }, worker))
    const written = await this.storeAll(collection, [...pending.values()])
    const now = nowIso()
    ;[...pending.keys()].forEach((i, k) => {
      results[i] = { slug: slugs[i]!, status: written[k]!.status, entry: entryView(collection, written[k]!.row, now) }
    })
    const counts = { created: 0, updated: 0, unchanged: 0, failed: 0 }
    for (const result of results) counts[result.status]++
    if (counts.created + counts.updated > 0) await this.options.siteEvents.siteChanged(collection.siteSlug)
    return { results, counts }
  }

  private async requireEntry(collection: LoadedCollection, entry: string): Promise<EntryRow> {
    const row = entry.startsWith('ent_') ? await this.options.repo.findById(collection.id, entry) : await this.options.repo.findBySlug(collection.id, entry)
    if (!row) throw notFound(`Entry "${entry}"`)
    return row
  }

  /**
   * Checks, renders and stores one entry. Stored values of removed fields are carried over, and
   * an entry whose effective content (timestamps, data, and baseUrl when it resolved something)
   * hashes as stored is left alone and reported unchanged, without fetching any image again.
   */
  private async write(
    principal: Principal,
    collection: LoadedCollection,
    item: unknown,
    baseUrl: string | undefined,
    existing: EntryRow | undefined,
  ): Promise<Written> {
    const prepared = await this.prepare(principal, collection, item, baseUrl, existing)
    return 'status' in prepared ? prepared : this.store(collection, prepared)
  }

  /**
   * Checks and renders one entry: unchanged as it is, or the row to store. The content hash is
   * taken over the entry as sent, so sending it again is unchanged even where the stored data
   * holds the library path of an image that was sent inline or by upload.
   */
  private async prepare(
    principal: Principal,
    collection: LoadedCollection,
    item: unknown,
    baseUrl: string | undefined,
    existing: EntryRow | undefined,
  ): Promise<Written | Pending> {
    const check = checkEntry(item, collection.fields, baseUrl)
    if (!check.ok) {
      const list = Object.entries(check.fields).map(([k, v]) => `${k} ${v}`)
      throw new EntryFailure('VALIDATION_FAILED', `Invalid entry: ${list.slice(0, 5).join('; ')}${list.length > 5 ? '; ...' : ''}`, check.fields)
    }
    const entry = check.entry
    const now = nowIso()
    const data = { ...keptValues(collection, existing), ...entry.data }
    const publishedAt = entry.publishedAt ?? existing?.published_at ?? now
    const createdAt = entry.createdAt ?? existing?.created_at ?? now
    const hash = contentHash(collection, entry, data, publishedAt, createdAt, baseUrl)
    if (existing && existing.content_hash === hash) return { status: 'unchanged', row: existing }

    const rendered = await renderEntry(this.options.media, principal, collection, data, baseUrl)
    const stored = {
      published_at: publishedAt,
      created_at: createdAt,
      updated_at: now,
      data: JSON.stringify(rendered.data),
      rendered: JSON.stringify(rendered.rendered),
      content_hash: hash,
    }
    return { slug: entry.slug, existing, stored }
  }

  /** Stores one prepared entry on its own. */
  private async store(collection: LoadedCollection, { slug, existing, stored }: Pending): Promise<Written> {
    if (existing) {
      const updated = { ...existing, ...stored }
      await this.options.repo.replace(existing.id, stored, this.changed(collection, [[updated, 'updated']]))
      return { status: 'updated', row: updated }
    }
    const row: EntryRow = { id: newId('ent'), collection_id: collection.id, slug, ...stored }
    try {
      await this.options.repo.insert(row, this.changed(collection, [[row, 'created']]))
      return { status: 'created', row }
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      // A concurrent request created the same slug first: replace it, as putEntry promises.
      const winner = await this.options.repo.findBySlug(collection.id, slug)
      if (!winner) throw error
      const updated = { ...winner, ...stored }
      await this.options.repo.replace(winner.id, stored, this.changed(collection, [[updated, 'updated']]))
      return { status: 'updated', row: updated }
    }
  }

  /** The `entry.changed` events of written entries, for the transaction that writes them. */
  private changed(collection: LoadedCollection, changes: Array<[EntryRow, EntryChange]>): AlsoRecord {
    const items = changes.map(([row, change]) => ({ collection: collection.name, slug: row.slug, entryId: row.id, change }))
    return (trx) => this.options.webhookEvents.emitEach(trx, collection.websiteId, 'entry.changed', items)
  }

  /**
   * Stores a batch's prepared entries in as few transactions as keep each one small (see
   * TRANSACTION_MAX_CHARS), letting the event loop go between two of them.
   */
  private async storeAll(collection: LoadedCollection, items: Pending[]): Promise<Written[]> {
    const written: Written[] = []
    for (const part of transactionParts(items)) {
      if (written.length > 0) await new Promise((resolve) => setImmediate(resolve))
      written.push(...(await this.storePart(collection, part)))
    }
    return written
  }

  /**
   * Stores prepared entries in one transaction (one commit instead of one per entry). When a
   * concurrent request created one of the slugs meanwhile, the transaction fails as a whole and
   * each entry is stored on its own instead, which replaces the winner's row.
   */
  private async storePart(collection: LoadedCollection, items: Pending[]): Promise<Written[]> {
    if (items.length <= 1) return Promise.all(items.map((item) => this.store(collection, item)))
    const rows = items.map(({ slug, existing, stored }): EntryRow =>
      existing ? { ...existing, ...stored } : { id: newId('ent'), collection_id: collection.id, slug, ...stored },
    )
    try {
      await this.options.repo.writeMany(
        rows.filter((_, i) => !items[i]!.existing),
        rows.filter((_, i) => items[i]!.existing),
        this.changed(
          collection,
          rows.map((row, i) => [row, items[i]!.existing ? 'updated' : 'created']),
        ),
      )
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      const written: Written[] = []
      for (const item of items) written.push(await this.store(collection, item))
      return written
    }
    return rows.map((row, i) => ({ status: items[i]!.existing ? 'updated' : 'created', row }))
  }
}

/**
 * The most characters of rows (their data and rendered JSON) one transaction of a batch writes. On
 * SQLite the driver is synchronous, so a transaction holds the event loop for as long as its writes
 * take: a batch of maximal rich-text entries is written in several, the event loop let go between
 * them, and a batch of ordinary entries (100 of a few KB) in one (docs/benchmarks.md).
 */
export const TRANSACTION_MAX_CHARS = 512 * 1024

/** Consecutive runs of `items`, each as large as fits in TRANSACTION_MAX_CHARS, and at least one item. */
function transactionParts(items: Pending[]): Pending[][] {
  const parts: Pending[][] = []
  let chars = Infinity
  for (const item of items) {
    const size = item.stored.data.length + item.stored.rendered.length
    if (chars + size > TRANSACTION_MAX_CHARS) {
      parts.push([])
      chars = 0
    }
    parts.at(-1)!.push(item)
    chars += size
  }
  return parts
}

/**
 * Items of a batch past its rich-text budget: characters are counted in input order, and from the
 * first item that would go past the budget on, every item carrying rich text is refused. So a
 * batch's rendering work is bounded whatever its items hold, and a client resends a clear tail.
 */
function richTextOverBudget(entries: unknown[]): Set<number> {
  const over = new Set<number>()
  let total = 0
  entries.forEach((item, i) => {
    const data = typeof item === 'object' && item !== null ? (item as { data?: unknown }).data : undefined
    if (typeof data !== 'object' || data === null) return
    let chars = 0
    for (const value of Object.values(data)) {
      if (typeof value !== 'object' || value === null) continue
      for (const key of ['html', 'markdown']) {
        const text = (value as Record<string, unknown>)[key]
        if (typeof text === 'string') chars += text.length
      }
    }
    if (chars === 0) return
    total += chars
    if (total > RICH_TEXT_BATCH_MAX_CHARS || over.size > 0) over.add(i)
  })
  return over
}

/** Stored values of fields that are no longer in the collection: kept on every write. */
function keptValues(collection: LoadedCollection, existing: EntryRow | undefined): Record<string, unknown> {
  if (!existing) return {}
  const current = new Set(collection.fields.map((f) => f.name))
  return Object.fromEntries(Object.entries(JSON.parse(existing.data) as Record<string, unknown>).filter(([k]) => !current.has(k)))
}

function contentHash(
  collection: LoadedCollection,
  entry: CheckedEntry,
  data: Record<string, unknown>,
  publishedAt: string,
  createdAt: string,
  baseUrl?: string,
): string {
  // A relative <img> in rich text depends on baseUrl too; so does any resolved image field.
  const hasRichText = collection.fields.some((f) => f.type === 'richText' && data[f.name] !== undefined)
  const base = entry.usedBaseUrl || hasRichText ? (baseUrl ?? null) : null
  // Field names and types too: after a schema change, sending the entry again renders it afresh.
  const fields = collection.fields.map((f) => [f.name, f.type])
  return createHash('sha256').update(canonicalJson({ publishedAt, createdAt, data, base, fields })).digest('hex')
}
