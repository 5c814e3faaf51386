import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Db, migrate, openDb } from '../../src/db/connect.ts'
import { createSiteEvents, type SiteEventBus } from '../../src/serving/site-events.ts'
import { createStore, STORES, type TestStore } from '../helpers/stores.ts'

const quiet = { warn() {}, info() {} }

for (const { name, skip } of STORES) {
  describe(`site events (${name})`, { skip }, () => {
    let store: TestStore
    let db: Db
    let events: SiteEventBus
    /**
     * What the handlers finished applying of this test's own changes, in order; each handler takes
     * a while to finish. Other test files' servers share the database, and with it the channel
     * changes are announced on: their changes come here too, and are not this test's.
     */
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
