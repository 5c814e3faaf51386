/**
 * The pixel size of a raster image, read from its header: PNG, GIF, WebP and JPEG (AVIF's is
 * deep in its boxes, and not read). Never decodes the image; bytes that break the format give no
 * size rather than an error.
 */

export type RasterFormat = 'png' | 'jpg' | 'gif' | 'webp' | 'avif'

export interface PixelSize {
  width: number | null
  height: number | null
}

const UNKNOWN: PixelSize = Object.freeze({ width: null, height: null })

/** The size the header of an image of `format` gives; nulls when it gives none. */
export function sizeOfFormat(format: RasterFormat, b: Buffer): PixelSize {
  try {
    switch (format) {
      case 'png':
        return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) }
      case 'gif':
        return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) }
      case 'webp':
        return webpSize(b)
      case 'jpg':
        return jpegSize(b)
      default:
        return UNKNOWN
    }
  } catch {
    return UNKNOWN
  }
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** The format of the bytes by their signature, among those whose size the header gives. */
export function rasterFormat(b: Buffer): RasterFormat | null {
  if (b.length >= 24 && b.subarray(0, 8).equals(PNG_SIGNATURE) && b.toString('latin1', 12, 16) === 'IHDR') return 'png'
  if (b.length >= 10 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) return 'gif'
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'webp'
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpg'
  return null
}

/** The pixel size of a PNG, GIF, WebP or JPEG image, judged by its signature; null for other bytes or a header without one. */
export function pixelSize(b: Buffer): { width: number; height: number } | null {
  const format = rasterFormat(b)
  if (format === null) return null
  const { width, height } = sizeOfFormat(format, b)
  return width === null || height === null || width === 0 || height === 0 ? null : { width, height }
}

function webpSize(b: Buffer): PixelSize {
  const chunk = b.toString('latin1', 12, 16)
  if (chunk === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) }
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21)
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) }
  }
  if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff }
  return UNKNOWN
}

/** Walks the JPEG markers to the first start-of-frame, which holds the size. */
function jpegSize(b: Buffer): PixelSize {
  let offset = 2
  while (offset + 9 < b.length) {
    if (b.readUInt8(offset) !== 0xff) return UNKNOWN
    const marker = b.readUInt8(offset + 1)
    const length = b.readUInt16BE(offset + 2)
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isFrame) return { height: b.readUInt16BE(offset + 5), width: b.readUInt16BE(offset + 7) }
    offset += 2 + length
  }
  return UNKNOWN
}
