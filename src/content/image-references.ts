/**
 * How an entry names an image, in an image field and in rich text (`<img src>`, `![](…)`) alike:
 *
 * - an absolute http(s) URL, fetched into the collection's library (once per URL);
 * - a relative URL, resolved against the request's baseUrl and fetched the same way;
 * - `/_assets/{sha256}.{ext}`, an image already in this website's library (as importAsset
 *   answers it), used as it is;
 * - `upload:upl_…`, a completed upload of the caller, copied into the collection's library;
 * - `data:image/…;base64,…`, an inline image, decoded and copied into the collection's library.
 *
 * Only URLs are fetched: the other forms work on an instance that reaches no public image host.
 */
import { URL_MAX_CHARS } from '../core/limits.ts'
import { quoted } from '../core/text.ts'
import { LIBRARY_PATH } from '../images/image-type.ts'

export type ImageReference =
  { kind: 'url'; url: string; relative: boolean } | { kind: 'library'; path: string } | { kind: 'upload'; uploadId: string } | { kind: 'inline'; url: string }

/** The forms, as API and tool descriptions state them. */
export const IMAGE_FORMS = `an http(s) URL (absolute, or relative to baseUrl), fetched; a /_assets/{hash}.{ext} path of this site's library; upload:upl_… (your upload); or a data:image/…;base64,… URL`

/** `upload:` followed by an upload id as createUploads hands it out. */
const UPLOAD_REFERENCE = /^upload:(upl_[A-Za-z0-9]{1,96})$/
/** What rich text keeps as an upload reference, well-formed or not (a malformed one is refused by name). */
export const UPLOAD_SCHEME = /^upload:/i

const INLINE = /^data:/i
const LIBRARY_PREFIX = '/_assets/'

/** A value repeated in a message: quoted, and cut to a short prefix with an ellipsis. */
export const echo = (value: string): string => quoted(value, 100)

/** What an image value names, with absolute and relative URLs resolved; or why it names nothing usable. */
export function imageReference(value: string, baseUrl: string | undefined): ImageReference | { problem: string } {
  // Inline images are bounded by the image size limit, checked on the decoded bytes.
  if (INLINE.test(value)) return { kind: 'inline', url: value }
  if (value.length > URL_MAX_CHARS) return { problem: `is longer than ${URL_MAX_CHARS} characters` }
  if (value.startsWith(LIBRARY_PREFIX)) {
    return LIBRARY_PATH.test(value)
      ? { kind: 'library', path: value }
      : { problem: `${echo(value)} is not a library path: write /_assets/{sha256}.{ext} as importAsset answers it` }
  }
  const upload = UPLOAD_REFERENCE.exec(value)
  if (upload) return { kind: 'upload', uploadId: upload[1]! }
  let absolute: URL | null
  try {
    absolute = new URL(value)
  } catch {
    absolute = null
  }
  if (absolute) {
    if (absolute.protocol === 'http:' || absolute.protocol === 'https:') return { kind: 'url', url: absolute.href, relative: false }
    if (absolute.protocol === 'upload:') return { problem: `${echo(value)} is not an upload: write upload:upl_… with an uploadId of createUploads` }
    return { problem: `must be an http(s) URL, a /_assets/… library path, upload:upl_… or a data:image/… URL, not ${echo(absolute.protocol)}` }
  }
  if (baseUrl === undefined)
    return { problem: `${echo(value)} is a relative URL: give an absolute URL, or send the batch with a baseUrl to resolve it against` }
  return { kind: 'url', url: new URL(value, baseUrl).href, relative: true }
}
