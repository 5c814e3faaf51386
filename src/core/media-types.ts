/**
 * Media types: the bare type of a Content-Type value, the header value served (with a charset for
 * text), and which types are worth compressing. Publishing (precompressed variants), uploads and
 * serving (Vary, Content-Encoding) all decide by these.
 */

/** A MIME type with optional parameters, as accepted in a contentType override. */
export const CONTENT_TYPE_PATTERN = '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\\s*;.*)?$'

const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/

const CHARSET_TYPES = new Set([
  'application/javascript',
  'application/ecmascript',
  'application/json',
  'application/xml',
  'application/manifest+json',
  'application/ld+json',
  'application/geo+json',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'image/svg+xml',
])

const COMPRESSIBLE_TYPES = new Set([
  'application/wasm',
  'application/vnd.ms-fontobject',
  'application/x-font-ttf',
  'font/ttf',
  'font/otf',
  'font/collection',
  'image/bmp',
  'image/vnd.microsoft.icon',
  'image/x-icon',
])

/** The bare media type, lowercased, or application/octet-stream when it is not a valid type. */
function bareMediaType(contentType: string): string {
  const semi = contentType.indexOf(';')
  const bare = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
  return MEDIA_TYPE.test(bare) ? bare : 'application/octet-stream'
}

function isTextual(bare: string): boolean {
  return bare.startsWith('text/') || CHARSET_TYPES.has(bare) || bare.endsWith('+xml') || bare.endsWith('+json')
}

/** Whether a file of this type is text (served with a charset, read back as text). */
export const isTextType = (contentType: string): boolean => isTextual(bareMediaType(contentType))

/** Content-Type header value: text, JS, JSON, SVG and XML types get `; charset=utf-8`. */
export function contentTypeHeader(contentType: string): string {
  const bare = bareMediaType(contentType)
  return isTextual(bare) ? `${bare}; charset=utf-8` : bare
}

/**
 * Whether this type is worth compressing: text and the uncompressed binary formats (fonts, icons,
 * WebAssembly); already-compressed ones (PNG, JPEG, WOFF2, ZIP...) are not. Published files of
 * these types get precompressed variants, and their responses carry `Vary: Accept-Encoding`.
 */
export function isCompressible(contentType: string): boolean {
  const bare = bareMediaType(contentType)
  return isTextual(bare) || COMPRESSIBLE_TYPES.has(bare)
}
