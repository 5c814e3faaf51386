/**
 * A throwaway S3-compatible server for tests: s3rver on loopback in a child process
 * (s3-process.ts says why), a free port, its objects in a temp dir removed on close, one bucket
 * created up front. s3rver accepts any request signed with its fixed key pair (S3RVER / S3RVER),
 * given here as `credentials`.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'

export interface TestS3 {
  /** `http://127.0.0.1:{port}`: use with path-style addressing. */
  endpoint: string
  bucket: string
  region: string
  credentials: { accessKeyId: string; secretAccessKey: string }
  /** Where s3rver keeps the objects (tests age an object by its file's mtime). */
  directory: string
  close(): Promise<void>
}

const CHILD = new URL('./s3-process.ts', import.meta.url).pathname

export async function startTestS3(bucket = 'plinth-test'): Promise<TestS3> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'plinth-s3-'))
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, S3_DIR: directory, S3_BUCKET: bucket },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let port: number
  try {
    port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before it listened`)))
      createInterface({ input: child.stdout }).once('line', (line) => resolve((JSON.parse(line) as { port: number }).port))
    })
  } catch (error) {
    child.kill()
    rmSync(directory, { recursive: true, force: true })
    throw error
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    directory,
    async close() {
      child.kill('SIGTERM')
      await exited
      rmSync(directory, { recursive: true, force: true })
    },
  }
}
