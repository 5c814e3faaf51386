import { setTimeout as delay } from 'node:timers/promises'
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { BLOB_ENCODINGS, type BlobEncoding, type BlobFile, type BlobStore, blobFileName, ENCODING_OF_SUFFIX } from './blob-store.ts'

/** A blob's key below the prefix, `ab/cd/{hash}{suffix}`: fanned out by the hash's first two bytes. */
const BLOB_NAME = /^([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})(\.br|\.gz)?$/
const CONTENT_TYPE = 'application/octet-stream'
/**
 * How young an object may be and still count as just written when a server reports the same
 * LastModified after a touch: S3 timestamps have whole seconds, so a touch within the second of
 * the write cannot move them, and a second more absorbs a small clock difference.
 */
const SAME_SECOND_MS = 2000
/** Wait before fetching again a body that was cut short, times the attempt. */
const BODY_RETRY_DELAY_MS = 100

export interface S3BlobStoreOptions {
  bucket: string
  region: string
  /** For S3-compatible servers (MinIO, R2, Ceph, tests); null means AWS. */
  endpoint: string | null
  /** False: `bucket.host/key`; most self-hosted servers need path style, `host/bucket/key`. */
  forcePathStyle: boolean
  /** Put before every key, so one bucket can hold several deployments; a `/` is added when missing, '' puts nothing. */
  prefix: string
  /** Null: the SDK's default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, profiles, instance roles). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null
  /** Tries per request, the first included. */
  maxAttempts: number
}

/** Tries per request of a server's store, the first included. */
export const S3_REQUEST_ATTEMPTS = 5

/**
 * Blobs as objects of an S3-compatible bucket, under `{prefix}ab/cd/{hash}` with `.br` and `.gz`
 * variants beside them, as the filesystem store lays out its files.
 *
 * A PutObject is atomic (an object is visible whole or not at all), so there are no temp files:
 * list() yields blobs and variants only, and skips any other key under the prefix.
 *
 * Failures: the SDK's `standard` retry strategy retries throttling (503 SlowDown, 429), other
 * 5xx answers, timeouts and reset connections, up to `maxAttempts` tries with jittered
 * exponential backoff (500 ms base for throttling, 100 ms otherwise, at most 20 s), drawing on a
 * client-wide retry budget so an endpoint that keeps failing is not hammered. Every request body
 * is a Buffer, so retrying a put resends the same bytes. Connecting may take 5 s, an answer's
 * headers 30 s, and a body may stall for 30 s at most; each breach is an error that is retried. The
 * SDK's retries end once an answer's headers arrive, so get() itself fetches again a body that
 * fails after them (cut short, stalled), within the same number of tries.
 *
 * Checksums: the client (SDK 3.729 and later) adds a CRC32 header to every upload and asks for one
 * on every download by default. Some S3-compatible servers refuse those headers (Cloudflare R2
 * answers 501 NotImplemented), so they are sent only where an operation requires them. Uploads lose
 * nothing: a Buffer body is signed with its SHA-256 (`x-amz-content-sha256`), which the server
 * checks.
 *
 * Timestamps: LastModified has whole seconds, so the sweep may judge an object's age up to a
 * second off, and a put of stored bytes within the second of their write (within two on a server
 * that cannot touch, see touch()) leaves the time as it was. Both are far inside the sweep's grace
 * period (an hour), the one reader of these times; tests comparing them need margins of seconds.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client
  /** The options' prefix, ending with `/` unless it is empty. */
  private readonly prefix: string

  constructor(private readonly options: S3BlobStoreOptions) {
    const { prefix } = options
    this.prefix = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint ?? undefined,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials ?? undefined,
      maxAttempts: options.maxAttempts,
      retryMode: 'standard',
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000, throwOnRequestTimeout: true, socketTimeout: 30_000 },
    })
  }

  private key(hash: string, encoding: BlobEncoding): string {
    return `${this.prefix}${hash.slice(0, 2)}/${hash.slice(2, 4)}/${blobFileName(hash, encoding)}`
  }

  async has(hash: string, encoding: BlobEncoding = 'identity'): Promise<boolean> {
    return (await this.head(this.key(hash, encoding))) !== null
  }

  async put(hash: string, bytes: Buffer, encoding: BlobEncoding = 'identity'): Promise<void> {
    const key = this.key(hash, encoding)
    // Stored already: marked as just written instead of uploaded again, so a sweep running now
    // does not take it for an orphan.
    const existing = await this.head(key)
    if (existing && (await this.touch(key, existing))) return
    await this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: bytes, ContentLength: bytes.length, ContentType: CONTENT_TYPE }))
  }

  /**
   * Moves an object's LastModified to now with a copy onto itself, which stays on the server.
   * False when the object has gone meanwhile, or when the server kept the old timestamp of an
   * object older than a second or two: some servers (s3rver among them) implement a self-copy
   * by rewriting the metadata alone. Then only a new upload makes the object young again.
   */
  private async touch(key: string, head: HeadObjectCommandOutput): Promise<boolean> {
    let copied: Date | undefined
    try {
      const result = await this.client.send(
        new CopyObjectCommand({
          Bucket: this.options.bucket,
          Key: key,
          CopySource: `${this.options.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`,
          // A copy onto itself is refused unless something changes; replacing the metadata
          // (with the same content type) is that change.
          MetadataDirective: 'REPLACE',
          ContentType: CONTENT_TYPE,
        }),
      )
      copied = result.CopyObjectResult?.LastModified
    } catch (error) {
      if (isNotFound(error)) return false
      throw error
    }
    const before = head.LastModified?.getTime() ?? 0
    if (copied && copied.getTime() > before) return true
    return before >= Date.now() - SAME_SECOND_MS
  }

  async get(hash: string, encoding: BlobEncoding = 'identity'): Promise<Buffer> {
    const key = this.key(hash, encoding)
    // The SDK retries a request until its answer's headers arrive; a body cut short after them (a
    // reset connection, a stall, an object replaced while it was read) is fetched again here.
    for (let attempt = 1; ; attempt++) {
      let result
      try {
        result = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }))
      } catch (error) {
        if (isNotFound(error)) throw Object.assign(new Error(`no such blob: ${key}`), { code: 'ENOENT', cause: error })
        throw error
      }
      if (!result.Body) throw new Error(`empty answer for blob ${key}`)
      try {
        return await readAll(result.Body as AsyncIterable<Uint8Array>, result.ContentLength, key)
      } catch (error) {
        if (attempt >= this.options.maxAttempts) throw error
        await delay(BODY_RETRY_DELAY_MS * attempt)
      }
    }
  }

  async delete(hash: string): Promise<void> {
    // A missing key is no error to DeleteObject.
    for (const encoding of BLOB_ENCODINGS) {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.key(hash, encoding) }))
    }
  }

  async *list(): AsyncIterable<BlobFile> {
    let token: string | undefined
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: this.prefix || undefined, ContinuationToken: token, MaxKeys: 1000 }),
      )
      // Keys come in byte order, so `{hash}`, `{hash}.br` and `{hash}.gz` arrive side by side,
      // as the sweep's grouping expects.
      for (const object of page.Contents ?? []) {
        if (!object.Key?.startsWith(this.prefix)) continue
        const name = object.Key.slice(this.prefix.length)
        const match = BLOB_NAME.exec(name)
        if (!match || !match[3]!.startsWith(match[1]! + match[2]!)) continue
        yield {
          name,
          hash: match[3]!,
          encoding: ENCODING_OF_SUFFIX[match[4] ?? '']!,
          bytes: object.Size ?? 0,
          modifiedMs: object.LastModified?.getTime() ?? 0,
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token)
  }

  /**
   * The age is asked again, then the object deleted. A conditional delete cannot close the gap
   * between the two: the ETag of a content-addressed object is the same before and after a touch
   * (the MD5 of the same bytes), and the condition on LastModified (IfMatchLastModifiedTime) is
   * offered for S3 Express directory buckets only. So a put that touches the object in that gap
   * (one round trip) loses it; as with the filesystem store, the publish's confirm() (or
   * storeBlob's check) finds the blob gone after its commit and writes it again
   * (docs/architecture.md, "Storage").
   */
  async removeIfOlder(file: BlobFile, beforeMs: number): Promise<boolean> {
    const key = this.prefix + file.name
    const head = await this.head(key)
    if (!head || (head.LastModified?.getTime() ?? 0) >= beforeMs) return false
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }))
    return true
  }

  /** Rejects unless the bucket answers with these credentials: for the readiness probe. */
  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }))
  }

  /** Every put is done when it resolves: nothing runs in the background. */
  async settled(): Promise<void> {}

  /** Closes the client's pooled connections. */
  close(): Promise<void> {
    this.client.destroy()
    return Promise.resolve()
  }

  private async head(key: string): Promise<HeadObjectCommandOutput | null> {
    try {
      return await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: key }))
    } catch (error) {
      if (isNotFound(error)) return null
      throw error
    }
  }
}

/**
 * A missing object: HeadObject answers a bare 404 (`NotFound`), GetObject and CopyObject
 * `NoSuchKey`. A missing bucket is a failure, not a missing blob (HeadObject cannot tell them
 * apart; check() does).
 */
function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null
  return e?.name !== 'NoSuchBucket' && (e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404)
}

/** The whole body in one Buffer, allocated once when the length is known; a short body is an error. */
async function readAll(body: AsyncIterable<Uint8Array>, length: number | undefined, key: string): Promise<Buffer> {
  if (length === undefined) {
    const chunks: Buffer[] = []
    for await (const chunk of body) chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    return Buffer.concat(chunks)
  }
  const bytes = Buffer.allocUnsafe(length)
  let offset = 0
  for await (const chunk of body) {
    if (offset + chunk.byteLength > length) throw new Error(`blob ${key}: more bytes than its Content-Length (${length})`)
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  if (offset !== length) throw new Error(`blob ${key}: ${offset} of ${length} bytes received`)
  return bytes
}
