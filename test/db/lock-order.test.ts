/**
 * Writers that insert or upsert the same keys at once must not deadlock on PostgreSQL: two
 * statements that take the same rows' locks in opposite orders wait for each other. Publishes
 * recording the same new blobs (BlobsRepository.insertMissing) and instances flushing the same
 * sites' traffic (TrafficRepository.add) write their rows in their keys' order (db/lock-order.ts).
 * SQLite has one writer at a time, so the question is PostgreSQL's alone.
 *
 * Each test makes the circle happen when rows go in as given: a third transaction holds the
 * middle key, so the first writer stops between its rows, and the second takes what the first
 * would take next.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql, type Transaction } from 'kysely'
import { BlobsRepository } from '../../src/blobs/blobs.repository.ts'
import { type Db, migrate, openDb } from '../../src/db/connect.ts'
import type { BlobsTable, Database, TrafficHoursTable } from '../../src/db/types.ts'
import { TrafficRepository } from '../../src/traffic/traffic.repository.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'

const row = (letter: string): BlobsTable => ({
  hash: letter.repeat(64),
  size: 1,
  br_size: null,
  gzip_size: null,
  variants_type: null,
  created_at: new Date().toISOString(),
})
const [A, B, X] = ['a', 'b', 'c'].map(row) as [BlobsTable, BlobsTable, BlobsTable]

/** Resolves once `count` inserts into `table` wait for a lock. */
async function lockWaiters(db: Db, table: string, count: number): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like ${`insert into "${table}"%`}`.execute(db.kysely)
    if ((rows[0]?.n ?? 0) >= count) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Runs two writers into `table` so that they would wait for each other in a circle if each took
 * its rows' locks in the order given: `holdMiddle` (in a third transaction, rolled back at the end)
 * first holds the key that stops `first` between its rows; `second` then starts, and the middle key
 * is let go. Answers how each writer ended.
 */
async function writeInCircle(
  db: Db,
  table: string,
  holdMiddle: (trx: Transaction<Database>) => Promise<unknown>,
  first: () => Promise<unknown>,
  second: () => Promise<unknown>,
): Promise<string[]> {
  let release!: () => void
  let holding!: () => void
  const held = new Promise<void>((resolve) => (holding = resolve))
  const holder = db.kysely.transaction().execute(async (trx) => {
    await holdMiddle(trx)
    holding()
    await new Promise<void>((resolve) => (release = resolve))
    throw new Error('rolled back')
  })
  await held
  const writers = [first()]
  await lockWaiters(db, table, 1)
  writers.push(second())
  await lockWaiters(db, table, 2)
  release()
  await assert.rejects(holder, /rolled back/)
  return (await Promise.allSettled(writers)).map((result) => (result.status === 'fulfilled' ? 'committed' : String(result.reason)))
}

const postgres = STORES.find((store) => store.name === 'postgres')!

describe('rows written at once by several writers (postgres)', { skip: postgres.skip }, () => {
  let store: TestStore
  let db: Db

  before(async () => {
    store = await createStore('postgres')
    db = openDb({ dataDir: store.dataDir, databaseUrl: store.databaseUrl })
    await migrate(db)
  })
  after(async () => {
    await db?.close()
    await store?.dispose()
  })

  test('two publishes inserting the same new blobs in opposite orders both commit', async () => {
    const blobs = new BlobsRepository(db.kysely)
    // As given, the first takes A, then waits for X; the second takes B, then waits for A; once X
    // is free, the first would wait for B.
    const outcomes = await writeInCircle(
      db,
      'blobs',
      (trx) => blobs.insertMissing(trx, [X]),
      () => db.kysely.transaction().execute((trx) => blobs.insertMissing(trx, [A, X, B])),
      () => db.kysely.transaction().execute((trx) => blobs.insertMissing(trx, [B, A])),
    )
    assert.deepEqual(outcomes, ['committed', 'committed'])
    const stored = await db.kysely.selectFrom('blobs').select('hash').orderBy('hash').execute()
    assert.deepEqual(
      stored.map((blob) => blob.hash),
      [A.hash, B.hash, X.hash],
    )
  })

  test('two instances flushing the same sites and hours in opposite orders both commit, and every count adds up', async () => {
    const traffic = new TrafficRepository(db.kysely)
    const hour = (site: string, requests: number): TrafficHoursTable => ({
      website_id: site,
      hour: '2026-11-29T10',
      requests,
      page_views: 0,
      bytes: 0,
      bots: 0,
      not_found: 0,
      status_2xx: requests,
      status_3xx: 0,
      status_4xx: 0,
      status_5xx: 0,
    })
    const flush = (hours: TrafficHoursTable[]) => traffic.add({ hours, keys: [], visitors: [] })
    const outcomes = await writeInCircle(
      db,
      'traffic_hours',
      (trx) => trx.insertInto('traffic_hours').values(hour('web_c', 100)).execute(),
      () => flush([hour('web_a', 1), hour('web_c', 1), hour('web_b', 1)]),
      () => flush([hour('web_b', 2), hour('web_a', 2)]),
    )
    assert.deepEqual(outcomes, ['committed', 'committed'])
    const stored = await db.kysely.selectFrom('traffic_hours').select(['website_id', 'requests']).orderBy('website_id').execute()
    assert.deepEqual(stored, [
      { website_id: 'web_a', requests: 3 },
      { website_id: 'web_b', requests: 3 },
      { website_id: 'web_c', requests: 1 },
    ])
  })
})
