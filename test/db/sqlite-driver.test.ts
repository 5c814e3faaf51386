/**
 * The SQLite store on the Node version this runs on: a process that runs queries (each prepares a
 * statement), lets the statements be collected, and exits must end as any other, with status 0.
 * better-sqlite3 12 on Node 24 aborts such a process (SIGABRT) once a collected statement is
 * finalized outside a JavaScript context; connect.ts picks the driver that does not. CI runs this
 * file on Node 24 as well as on the Node it installs with.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, describe, test } from 'node:test'

const ROOT = path.resolve(import.meta.dirname, '../..')

const CHILD = `
import { sql } from 'kysely'
import { migrate, openDb } from './src/db/connect.ts'
const db = openDb({ databaseUrl: '', dataDir: process.env.DATA_DIR })
await migrate(db)
for (let round = 0; round < 5; round++) {
  for (let i = 0; i < 500; i++) await sql\`select \${i} as n, \${'x'.repeat(i % 7)} as s\`.execute(db.kysely)
  globalThis.gc()
}
const users = await db.kysely.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
console.log('queries done, users:', Number(users.n))
await db.close()
`

describe('the SQLite driver on this Node version', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-sqlite-driver-'))
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  test('a process whose statements are collected while it runs and at exit ends with status 0', () => {
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', CHILD], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir },
      encoding: 'utf8',
      timeout: 60_000,
    })
    assert.equal(child.signal, null, `the process was killed by ${child.signal}: ${child.stderr.slice(-2000)}`)
    assert.equal(child.status, 0, child.stderr.slice(-2000))
    assert.match(child.stdout, /queries done, users: 0/)
  })
})
