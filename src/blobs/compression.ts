import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import { isCompressible } from '../core/media-types.ts'

const brotli = promisify(brotliCompress)
const gz = promisify(gzip)

/** A variant is kept only when it saves at least this share of the bytes. */
const MIN_SAVING = 0.1

export interface Variants {
  br: Buffer | null
  gzip: Buffer | null
}

/**
 * Precompressed variants for serving, computed once at publish (on the thread pool, so several
 * files compress in parallel). Brotli quality 9 is close to 11's size at a fraction of its time.
 */
export async function compressVariants(bytes: Buffer, contentType: string): Promise<Variants> {
  if (bytes.length < 256 || !isCompressible(contentType)) return { br: null, gzip: null }
  const [br, gzipped] = await Promise.all([
    brotli(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 9,
        [constants.BROTLI_PARAM_MODE]: contentType.startsWith('font/') ? constants.BROTLI_MODE_FONT : constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
    gz(bytes, { level: 9 }),
  ])
  const worthIt = (variant: Buffer) => variant.length <= bytes.length * (1 - MIN_SAVING)
  return { br: worthIt(br) ? br : null, gzip: worthIt(gzipped) ? gzipped : null }
}
