/**
 * The s3rver of startTestS3 (s3.ts), in a process of its own: s3rver lets an error of a read
 * escape as an uncaught exception when an object is deleted while it is being read (as the
 * sweep tests do on purpose), which would end the test process; here that read's request fails
 * and the server goes on. Reads S3_DIR and S3_BUCKET, prints `{"port": N}` when ready,
 * and stops when its parent goes away.
 */
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'

type S3rverConstructor = new (options: { address: string; port: number; silent: boolean; directory: string; configureBuckets: Array<{ name: string }> }) => {
  run(): Promise<AddressInfo>
  close(): Promise<void>
}

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor

// s3rver reads an object's file after it answered the request's headers; a file deleted in
// between fails a stream nobody listens to. That request is lost, not the server.
process.on('uncaughtException', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'ENOENT') throw error
})
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: process.env.S3_DIR!, configureBuckets: [{ name: process.env.S3_BUCKET! }] })
const { port } = await server.run()
const stop = (): void => {
  server
    .close()
    .catch((error: unknown) => console.error(error))
    .finally(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.stdin.on('close', stop).resume()
console.log(JSON.stringify({ port }))
