import { randomBytes } from 'node:crypto'

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const LOWERCASE_BASE36 = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** Uniformly random text over `alphabet` (rejection sampling, so no character is favoured). */
function randomText(alphabet: string, length: number): string {
  // The largest multiple of the alphabet's size a byte can hold: bytes at or above it are dropped.
  const usable = 256 - (256 % alphabet.length)
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < usable) out += alphabet[byte % alphabet.length]
      if (out.length === length) break
    }
  }
  return out
}

/** Uniformly random base62 text. */
export const randomBase62 = (length: number): string => randomText(BASE62, length)

export type IdPrefix = 'usr' | 'tok' | 'web' | 'job' | 'upl' | 'col' | 'ent' | 'ast' | 'sub' | 'whk' | 'evt' | 'dlv' | 'prq' | 'sch'

/** Opaque, random (not sequential) ids: web_..., job_..., usr_..., tok_... */
export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBase62(22)}`

/**
 * Random characters of an id that also names a host (a draft's preview, `{slug}--d{chars}`):
 * lowercase letters and digits, as host names are case-insensitive, and few enough that the label
 * of the longest slug stays within the 63 characters of a DNS label (50 + 3 + 10).
 */
export const LABEL_ID_CHARS = 10

/** How a draft's id starts: the only id whose random part stands in a host label (newDraftId). */
export const DRAFT_ID_PREFIX = 'drf_'

/** Whether a reference names a draft (a draft id) rather than a version. */
export const isDraftId = (ref: unknown): ref is string => typeof ref === 'string' && ref.startsWith(DRAFT_ID_PREFIX)

/** A new draft id: DRAFT_ID_PREFIX and LABEL_ID_CHARS lowercase letters and digits, so it may stand in a host label. */
export const newDraftId = (): string => DRAFT_ID_PREFIX + randomText(LOWERCASE_BASE36, LABEL_ID_CHARS)

export const nowIso = (): string => new Date().toISOString()

/** The highest number a site's version can have: both databases keep it as a 32-bit integer. */
export const VERSION_NUMBER_MAX = 2_147_483_647

/** A version number as a path or a host label writes it: digits, no leading zero. */
const VERSION_NUMBER_DIGITS = /^[1-9][0-9]*$/

/**
 * The number a text names when it is written as a version number (`2`, not `02` or `2.0`), null
 * when it is not. A number past VERSION_NUMBER_MAX is returned as it is: it names no version.
 */
export function versionNumberOf(text: string): number | null {
  return VERSION_NUMBER_DIGITS.test(text) ? Number(text) : null
}
