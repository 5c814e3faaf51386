/** The blob store the settings choose, opened once at start (compose.ts). */
import path from 'node:path'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { BlobStore } from './blob-store.ts'
import { FsBlobStore } from './fs-blob-store.ts'

/**
 * Files under the data dir (a store laid out in two levels of folders is moved to one first, see
 * FsBlobStore), or an S3-compatible bucket.
 */
export async function openBlobStore(config: Config, log: Logger): Promise<BlobStore> {
  if (config.s3 === null) {
    const store = new FsBlobStore(path.join(config.dataDir, 'blobs'))
    const moved = await store.moveTwoLevelBlobs()
    if (moved > 0) log.info({ moved }, `blob store: moved ${moved} files from the earlier two-level folders (blobs/ab/cd/) to blobs/ab/`)
    return store
  }
  // Loaded only here: an instance that keeps its blobs on the filesystem never holds the AWS SDK.
  const { S3BlobStore, S3_REQUEST_ATTEMPTS } = await import('./s3-blob-store.ts')
  const { bucket, region, endpoint, forcePathStyle, prefix } = config.s3
  // Credentials come from the SDK's default chain (the standard AWS variables, profiles, roles).
  return new S3BlobStore({ bucket, region, endpoint, forcePathStyle, prefix, credentials: null, maxAttempts: S3_REQUEST_ATTEMPTS })
}
