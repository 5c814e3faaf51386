/** Row -> API entry, and the opaque listing cursor. */

import { validationFailed } from '../core/errors.ts'
import type { EntryRow } from '../db/types.ts'
import type { Entry } from './content.schemas.ts'
import type { EntryPosition } from './entries.repository.ts'
import { normalizeInstant } from './entries.validation.ts'

export function entryView(collection: { name: string; fields: { name: string }[] }, row: EntryRow, now: string): Entry {
  const rendered = JSON.parse(row.rendered) as Record<string, unknown>
  const current: Record<string, unknown> = {}
  for (const field of collection.fields) if (Object.hasOwn(rendered, field.name)) current[field.name] = rendered[field.name]
  return {
    id: row.id,
    slug: row.slug,
    collection: collection.name,
    path: `/${collection.name}-${row.slug}`,
    live: row.published_at <= now,
    publishedAt: row.published_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
    rendered: current,
  }
}

const ENTRY_ID = /^ent_[A-Za-z0-9]{22}$/

export const encodeCursor = (row: EntryPosition): string => Buffer.from(JSON.stringify([row.publishedAt, row.id])).toString('base64url')

/** The position a cursor stands for; VALIDATION_FAILED for anything this API did not hand out. */
export function decodeCursor(cursor: string): EntryPosition {
  const bad = validationFailed({ cursor: 'is not a cursor returned by this listing (pass nextCursor unchanged)' })
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw bad
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw bad
  const [publishedAt, id] = parsed as unknown[]
  if (typeof publishedAt !== 'string' || normalizeInstant(publishedAt) !== publishedAt) throw bad
  if (typeof id !== 'string' || !ENTRY_ID.test(id)) throw bad
  return { publishedAt, id }
}

/** JSON with object keys sorted at every depth: equal content, equal text, equal hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value)
}
