import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { type Db, migrate, openDb } from '../../src/db/connect.ts'
import { createSiteEvents, type SiteEventBus } from '../../src/serving/site-events.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'

const quiet = { warn() {}, info() {} }

for (const { name, skip } of STORES) {
  describe(`site events (${name})`, { skip }, () => {
    let store: TestStore
    let db: Db
    let events: SiteEventBus
    /** What the handlers finished applying of this test's own changes, in order; each handler takes a while to finish. */
    const applied: string[] = []
    const ours = new Set(['domain www.example.com', 'site cafe'])
    const slowly = (what: string) =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          if (ours.has(what)) applied.push(what)
          resolve()
        }, 50),
      )

    before(async () => {
      store = await createStore(name)
      db = openDb({ databaseUrl: store.databaseUrl, dataDir: store.dataDir })
      await migrate(db)
      events = await createSiteEvents(
        db,
        store.databaseUrl,
        { siteChanged: (slug) => slowly(`site ${slug}`), domainChanged: (domain) => slowly(`domain ${domain}`), resync() {} },
        quiet,
      )
    })
    after(async () => {
      await events?.close()
      await db?.close()
      await store?.dispose()
    })

    test('the instance that announces a change has applied it when the announcement resolves', async () => {
      await events.domainChanged('www.example.com')
      assert.deepEqual(applied, ['domain www.example.com'], 'the domain handler finished first')
      await events.siteChanged('cafe')
      assert.deepEqual(applied, ['domain www.example.com', 'site cafe'])
    })
  })
}

const postgres = STORES.find((store) => store.name === 'postgres')!

describe('site events between instances (postgres)', { skip: postgres.skip }, () => {
  const stores: TestStore[] = []
  const dbs: Db[] = []
  const buses: SiteEventBus[] = []
  after(async () => {
    for (const bus of buses) await bus.close()
    for (const db of dbs) await db.close()
    for (const store of stores) await store.dispose()
  })

  /**
   * This run's keys end with it: other runs on the same database may announce in the old format,
   * which every instance applies.
   */
  const run = randomUUID().slice(0, 8)
  const key = (name: string) => `${name}-${run}`

  /** An instance on `store`'s schema, noting the slugs of this run it is told of. */
  async function instance(store: TestStore): Promise<{ bus: SiteEventBus; heard: string[] }> {
    const db = openDb({ databaseUrl: store.databaseUrl, dataDir: store.dataDir })
    dbs.push(db)
    await migrate(db)
    const heard: string[] = []
    const bus = await createSiteEvents(
      db,
      store.databaseUrl,
      { siteChanged: (slug) => void (slug.endsWith(run) && heard.push(slug.slice(0, -run.length - 1))), domainChanged() {}, resync() {} },
      quiet,
    )
    buses.push(bus)
    return { bus, heard }
  }

  test("a change reaches the other instances of its schema, and none of another install's schema in the same database", async () => {
    const [mine, theirs] = [await createStore('postgres'), await createStore('postgres')]
    stores.push(mine, theirs)
    const first = await instance(mine)
    const second = await instance(mine)
    const elsewhere = await instance(theirs)
    const watcher = await instance(theirs)
    await first.bus.siteChanged(key('shared-slug'))
    await elsewhere.bus.siteChanged(key('their-slug'))
    await elsewhere.bus.siteChanged(key('marker'))
    await first.bus.siteChanged(key('our-marker'))
    // A connection receives notifications in commit order: once an instance has heard a marker
    // sent after the others, it has been handed each of them, and applied it or not.
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10))
    }
    await until(() => watcher.heard.includes('marker') && second.heard.includes('our-marker'))
    assert.deepEqual(second.heard, ['shared-slug', 'our-marker'], 'the other instance of the schema applied its changes, and nothing of the other schema')
    assert.deepEqual(first.heard, ['shared-slug', 'our-marker'], 'the announcing instance applied its changes once, itself')
    assert.deepEqual(watcher.heard, ['their-slug', 'marker'], "an instance of the other install applied only that install's changes")
    assert.deepEqual(elsewhere.heard, ['their-slug', 'marker'])

    // A payload without a schema, as an instance of an earlier version sends it during an upgrade, is applied by every other instance.
    await sql`select pg_notify('plinth_site_changed', ${`${randomUUID()} ${key('from-before')}`})`.execute(dbs[0]!.kysely)
    const instances = [first, second, elsewhere, watcher]
    await until(() => instances.every(({ heard }) => heard.includes('from-before')))
    assert.deepEqual(
      instances.map(({ heard }) => heard.at(-1)),
      ['from-before', 'from-before', 'from-before', 'from-before'],
    )
  })
})
