/**
 * Benchmark child: an S3-compatible server (s3rver, as the tests use) on 127.0.0.1, a free port,
 * one bucket (BENCH_S3_BUCKET), its objects under BENCH_S3_DIR. In a process of its own so that
 * serving the bucket takes no CPU from the load generator, and its cost shows as its own.
 * Prints one JSON line {ready, address, pid} when listening; s3rver accepts any request signed
 * with its fixed key pair (S3RVER / S3RVER).
 */
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { serveIpc } from './lib/child-ipc.ts'

/** The part of s3rver's API used here (it ships no type declarations). */
type S3rverConstructor = new (options: { address: string; port: number; silent: boolean; directory: string; configureBuckets: Array<{ name: string }> }) => {
  run(): Promise<AddressInfo>
  close(): Promise<void>
}

const directory = process.env.BENCH_S3_DIR
const bucket = process.env.BENCH_S3_BUCKET
if (!directory || !bucket) throw new Error('BENCH_S3_DIR and BENCH_S3_BUCKET must be set')

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] })
const { port } = await server.run()
serveIpc({}, () => server.close())
console.log(JSON.stringify({ ready: true, address: `http://127.0.0.1:${port}`, pid: process.pid }))
