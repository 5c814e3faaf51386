/**
 * Checks one entry item against the collection's fields, with a message per offending field.
 * Used for putEntry and for every batch item alike, so a bad item fails alone and says why.
 */

import { RICH_TEXT_MAX_CHARS, TEXT_FIELD_DEFAULT_MAX, URL_MAX_CHARS } from '../core/limits.ts'
import { clipped } from '../core/text.ts'
import type { EntryError, Field } from './content.schemas.ts'
import { ENTRY_SLUG_PATTERN } from './content.schemas.ts'
import { imageReference } from './image-references.ts'

/** Why one entry could not be written; a batch reports it as that item's result. */
export class EntryFailure extends Error {
  constructor(
    readonly code: 'VALIDATION_FAILED' | 'DUPLICATE_SLUG' | 'IMAGE_IMPORT_FAILED' | 'RICH_TEXT_TOO_COSTLY' | 'RICH_TEXT_BUDGET_EXCEEDED',
    message: string,
    readonly fields: Record<string, string>,
  ) {
    super(message)
  }

  toResult(): EntryError {
    const field = Object.keys(this.fields)[0]
    return { code: this.code, message: this.message, ...(field ? { field } : {}), fields: this.fields }
  }
}

export type RichText = { html: string } | { markdown: string }

export interface CheckedEntry {
  slug: string
  publishedAt?: string
  createdAt?: string
  /** Values of the current fields; image URLs made absolute; nulls dropped. */
  data: Record<string, unknown>
  /** True when a relative image URL was resolved against baseUrl (so baseUrl is part of the content). */
  usedBaseUrl: boolean
}

export type EntryCheck = { ok: true; entry: CheckedEntry } | { ok: false; fields: Record<string, string> }

const MAX_NAMED_UNKNOWN = 20
const MAX_KEY_ECHO = 60
const SLUG = new RegExp(ENTRY_SLUG_PATTERN)
const ITEM_KEYS = new Set(['slug', 'publishedAt', 'createdAt', 'data'])
// RFC 3339 date-time with an offset, as the listing order and "live" depend on it being exact.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** An ISO instant normalized to UTC with milliseconds (so timestamps sort as text), or null. */
export function normalizeInstant(value: unknown): string | null {
  if (typeof value !== 'string' || !DATE_TIME.test(value)) return null
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) return null
  const year = new Date(ms).getUTCFullYear()
  return year >= 1000 && year <= 9999 ? new Date(ms).toISOString() : null
}

function isRealDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value
}

/** A base URL for relative image paths: absolute http(s). */
export function baseUrlProblem(baseUrl: string | undefined): string | null {
  if (baseUrl === undefined) return null
  try {
    const url = new URL(baseUrl)
    return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'must be an absolute http(s) URL'
  } catch {
    return 'must be an absolute http(s) URL'
  }
}

function urlProblem(value: string): string | null {
  if (value.length > URL_MAX_CHARS) return `is longer than ${URL_MAX_CHARS} characters`
  if (value.startsWith('/') && !value.startsWith('//')) return null
  try {
    const url = new URL(value)
    return ['http:', 'https:', 'mailto:'].includes(url.protocol) ? null : 'must be an http(s) or mailto URL, or a site path starting with "/"'
  } catch {
    return 'must be an absolute URL or a site path starting with "/"'
  }
}

/** Why a value does not fit its field, or null. Image values are read by imageReference. */
function valueProblem(field: Field, value: unknown): string | null {
  switch (field.type) {
    case 'text': {
      if (typeof value !== 'string') return 'must be a string'
      const max = field.maxLength ?? TEXT_FIELD_DEFAULT_MAX
      return value.length > max ? `must be at most ${max} characters (it has ${value.length})` : null
    }
    case 'richText': {
      if (!isObject(value)) return 'must be an object {"html": "..."} or {"markdown": "..."}'
      const keys = Object.keys(value)
      if (keys.length !== 1 || (keys[0] !== 'html' && keys[0] !== 'markdown')) return 'must have exactly one key, "html" or "markdown"'
      const text = value[keys[0]]
      if (typeof text !== 'string') return `.${keys[0]} must be a string`
      return text.length > RICH_TEXT_MAX_CHARS ? `must be at most ${RICH_TEXT_MAX_CHARS} characters` : null
    }
    case 'image':
      return typeof value === 'string' && value !== '' ? null : 'must be a string: an image URL, a /_assets/… library path, upload:upl_… or a data:image/… URL'
    case 'date':
      if (typeof value !== 'string') return 'must be a date string (YYYY-MM-DD or an ISO-8601 date-time)'
      if (DATE_ONLY.test(value)) return isRealDate(value) ? null : 'is not a real calendar date'
      return normalizeInstant(value) ? null : 'must be YYYY-MM-DD or an ISO-8601 date-time with a time zone (e.g. 2024-05-01T09:00:00Z)'
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number'
      if (field.min !== undefined && value < field.min) return `must be at least ${field.min}`
      if (field.max !== undefined && value > field.max) return `must be at most ${field.max}`
      return null
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false'
    case 'url':
      return typeof value === 'string' ? urlProblem(value) : 'must be a URL string'
    case 'choice':
      return typeof value === 'string' && field.options?.includes(value)
        ? null
        : `must be one of ${(field.options ?? []).map((o) => JSON.stringify(o)).join(', ')}`
  }
}

/** Checks the slug alone (putEntry takes it from the path, batch items from the body). */
export function slugProblem(slug: unknown): string | null {
  if (typeof slug !== 'string') return 'is required: 1 to 80 lowercase letters, digits and hyphens, starting and ending with a letter or digit'
  if (slug.length < 1 || slug.length > 80) return 'must be 1 to 80 characters'
  return SLUG.test(slug) ? null : 'may hold only lowercase letters, digits and hyphens, starting and ending with a letter or digit (no "/", ".", "_" or spaces)'
}

export function checkEntry(item: unknown, fields: Field[], baseUrl: string | undefined): EntryCheck {
  if (!isObject(item)) return { ok: false, fields: { entry: 'must be an object with slug, data and optional publishedAt, createdAt' } }
  const problems: Record<string, string> = {}
  let unknown = 0
  // Named up to a bound, so an item with thousands of stray keys gets a bounded answer; a long
  // key is named by its first characters.
  const stray = (key: string, message: string) => {
    if (unknown++ < MAX_NAMED_UNKNOWN) problems[clipped(key, MAX_KEY_ECHO)] = message
  }
  for (const key of Object.keys(item)) if (!ITEM_KEYS.has(key)) stray(key, 'is not an accepted field (field values go under data)')
  const slug = slugProblem(item.slug)
  if (slug) problems.slug = slug
  const instants: Record<string, string | undefined> = {}
  for (const key of ['publishedAt', 'createdAt'] as const) {
    if (item[key] === undefined) continue
    const normalized = normalizeInstant(item[key])
    if (normalized) instants[key] = normalized
    else problems[key] = 'must be an ISO-8601 date-time with a time zone (e.g. 2024-05-01T09:00:00Z)'
  }
  const data: Record<string, unknown> = {}
  let usedBaseUrl = false
  if (!isObject(item.data)) problems.data = 'is required: an object of field values'
  else {
    const byName = new Map(fields.map((f) => [f.name, f]))
    for (const key of Object.keys(item.data)) if (!byName.has(key)) stray(`data.${key}`, 'is not a field of this collection')
    for (const field of fields) {
      const value = Object.hasOwn(item.data, field.name) ? item.data[field.name] : undefined
      const at = `data.${field.name}`
      if (value === undefined || value === null || value === '') {
        if (field.required) problems[at] = 'is required'
        continue
      }
      const problem = valueProblem(field, value)
      if (problem) {
        problems[at] = problem
        continue
      }
      if (field.type === 'image') {
        const reference = imageReference(value as string, baseUrl)
        if ('problem' in reference) problems[at] = reference.problem
        else if (reference.kind === 'url') {
          data[field.name] = reference.url
          usedBaseUrl ||= reference.relative
        } else data[field.name] = value
      } else data[field.name] = value
    }
  }
  if (Object.keys(problems).length > 0) return { ok: false, fields: problems }
  return { ok: true, entry: { slug: item.slug as string, ...instants, data, usedBaseUrl } }
}
