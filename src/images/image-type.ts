/**
 * What an image really is, judged from its bytes (never from a file name or a Content-Type
 * header), and its pixel size when the header gives it cheaply (core/image-size.ts). Only raster
 * formats browsers show everywhere are accepted; SVG is refused because it can carry scripts.
 */

import { sizeOfFormat } from '../core/image-size.ts'

export interface ImageType {
  ext: 'png' | 'jpg' | 'gif' | 'webp' | 'avif'
  contentType: string
  width: number | null
  height: number | null
}

/** The image types kept in a library, with the file extension of their library URLs. */
const ACCEPTED: Readonly<Record<string, ImageType['ext']>> = Object.freeze({
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
})

/** The media types of accepted images: `image/png`, `image/jpeg`, ... */
export const ACCEPTED_IMAGE_MEDIA_TYPES: readonly string[] = Object.keys(ACCEPTED)

/** The extension of a library URL for an image of this type (`bin` for a type never accepted). */
export const imageExtension = (contentType: string): string => ACCEPTED[contentType] ?? 'bin'

/** Where a site serves a library image, site-relative: `/_assets/{sha256}.{ext}`. */
export const libraryPath = (hash: string, contentType: string): string => `/_assets/${hash}.${imageExtension(contentType)}`

/** A library path, capturing the hash and the extension. */
export const LIBRARY_PATH = /^\/_assets\/([0-9a-f]{64})\.([a-z0-9]{1,5})$/

const ACCEPTED_IMAGE_TYPES = 'PNG, JPEG, GIF, WebP or AVIF'

/** The image type of the bytes, or why they are not an accepted image. */
export async function sniffImage(bytes: Buffer): Promise<ImageType | { problem: string }> {
  if (bytes.length === 0) return { problem: 'is empty' }
  // Loaded on the first image judged: most starts judge none.
  const { fileTypeFromBuffer } = await import('file-type')
  const detected = await fileTypeFromBuffer(bytes)
  const ext = detected ? ACCEPTED[detected.mime] : undefined
  if (detected && ext) return { ext, contentType: detected.mime, ...sizeOfFormat(ext, bytes) }
  if (looksLikeSvg(bytes)) return { problem: `is an SVG image; SVG is refused because it can carry scripts (send ${ACCEPTED_IMAGE_TYPES})` }
  const what = detected ? `${detected.mime} data` : 'not a recognized image'
  return { problem: `is ${what}, not a ${ACCEPTED_IMAGE_TYPES} image` }
}

function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase()
  return head.startsWith('<svg') || ((head.startsWith('<?xml') || head.startsWith('<!--') || head.startsWith('<!doctype svg')) && head.includes('<svg'))
}
