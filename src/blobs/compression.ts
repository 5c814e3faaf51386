import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import { isCompressible } from '../core/media-types.ts'

const brotli = promisify(brotliCompress)
const gz = promisify(gzip)

/** A variant is kept only when it saves at least this share of the bytes. */
const MIN_SAVING = 0.1

const BROTLI_QUALITY = 5
const GZIP_LEVEL = 6

export interface Variants {
  br: Buffer | null
  gzip: Buffer | null
}

/** Whether a blob of this size and type gets precompressed variants at all. */
export function worthCompressing(size: number, contentType: string): boolean {
  return size >= 256 && isCompressible(contentType)
}

/**
 * Precompressed variants for serving, computed once per blob (on the libuv pool, so several files
 * compress in parallel), after the publish that stored it has answered (blob-variants.ts) and for
 * each rendered content page. The qualities weigh the CPU of a busy server against bytes sent:
 * Brotli 5 and gzip 6 save nearly all that their highest levels save for a fraction of the CPU,
 * and Brotli 5 clearly more than 3 (docs/benchmarks.md#what-the-design-rests-on).
 */
export async function compressVariants(bytes: Buffer, contentType: string): Promise<Variants> {
  if (!worthCompressing(bytes.length, contentType)) return { br: null, gzip: null }
  const [br, gzipped] = await Promise.all([
    brotli(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [constants.BROTLI_PARAM_MODE]: contentType.startsWith('font/') ? constants.BROTLI_MODE_FONT : constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
    gz(bytes, { level: GZIP_LEVEL }),
  ])
  const worthIt = (variant: Buffer) => variant.length <= bytes.length * (1 - MIN_SAVING)
  return { br: worthIt(br) ? br : null, gzip: worthIt(gzipped) ? gzipped : null }
}
