/**
 * Plinth instances scaled out as a deployment runs them: several servers on one PostgreSQL schema
 * and one S3 bucket, each with a data dir and a port of its own. Each instance's database
 * connections carry an application_name of their own, so a test can pick out that instance's
 * backends in pg_stat_activity (its change listener, say) without touching anyone else's.
 */
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { TestS3 } from './s3.ts'
import { startOnStore, type TestServer, testConfig } from './server.ts'
import { removeDataDir } from './stores.ts'

export interface Instance {
  server: TestServer
  /** Put on every PostgreSQL connection of this instance (pg_stat_activity.application_name). */
  applicationName: string
  dataDir: string
}

/**
 * Starts one instance on the shared database (a URL with its search_path set, test/helpers/stores.ts)
 * and the shared bucket. The S3 credentials come from the standard AWS variables, as in production:
 * call useS3Credentials first.
 */
export async function startInstance(name: string, databaseUrl: string, s3: TestS3, env: Record<string, string> = {}): Promise<Instance> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `plinth-instance-${name}-`))
  const applicationName = `plinth-${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const url = new URL(databaseUrl)
  url.searchParams.set('application_name', applicationName)
  const config = testConfig(dataDir, {
    DATABASE_URL: url.toString(),
    PLINTH_BLOB_STORE: 's3',
    PLINTH_S3_BUCKET: s3.bucket,
    PLINTH_S3_REGION: s3.region,
    PLINTH_S3_ENDPOINT: s3.endpoint,
    PLINTH_S3_FORCE_PATH_STYLE: 'true',
    ...env,
  })
  const store = { dataDir, databaseUrl: config.databaseUrl, dispose: () => removeDataDir(dataDir) }
  return { server: await startOnStore(store, config), applicationName, dataDir }
}

/**
 * Sets AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to the test server's key pair, where the S3
 * store's default credential chain reads them; the returned function puts the old values back.
 */
export function useS3Credentials(s3: Pick<TestS3, 'credentials'>): () => void {
  const saved = { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY }
  process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId
  process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}

/**
 * The file in which s3rver keeps an object's bytes. s3rver reports an object's LastModified as
 * that file's modification time, so setting it (fs.utimes) ages the object as time would.
 */
export function s3ObjectFile(s3: TestS3, key: string): string {
  const parts = key.split('/')
  return path.join(s3.directory, s3.bucket, ...parts.slice(0, -1), `${parts.at(-1)}._S3rver_object`)
}
