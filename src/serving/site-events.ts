import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import pg from 'pg'
import type { Db } from '../db/connect.ts'

const CHANNEL = 'plinth_site_changed'

/**
 * Told whenever what a slug serves changes (a publish, a promotion, an entry or collection
 * edit), so that every serving cache, here and on other instances, drops what it holds for it.
 */
export interface SiteEvents {
  siteChanged(slug: string): Promise<void>
}

export interface SiteEventBus extends SiteEvents {
  close(): Promise<void>
}

/**
 * Tells every serving cache that a slug changed. On SQLite there is one server process, so the
 * local cache is all there is. On PostgreSQL, where several instances share the database, the
 * change is also published with NOTIFY and every instance LISTENs, so a promotion made through
 * one instance is visible on the next request to any other.
 */
export async function createSiteEvents(
  db: Db,
  databaseUrl: string | null,
  onChange: (slug: string) => void,
  log: { warn(obj: unknown, msg?: string): void },
): Promise<SiteEventBus> {
  if (db.dialect !== 'postgres' || !databaseUrl) {
    return { siteChanged: async (slug) => onChange(slug), close: async () => {} }
  }

  // Our own notifications come back to us: the change was applied locally already, and applying
  // it again later would drop caches rebuilt in between. The payload is `{instance} {slug}`.
  const instance = randomUUID()
  const received = (payload: string): void => {
    const space = payload.indexOf(' ')
    if (space === -1) onChange(payload)
    else if (payload.slice(0, space) !== instance) onChange(payload.slice(space + 1))
  }
  let listener: pg.Client | null = null
  let closed = false
  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: databaseUrl })
    client.on('notification', (message) => message.payload && received(message.payload))
    client.on('error', (err) => {
      log.warn({ err }, 'site change listener lost its connection; reconnecting')
      listener = null
      client.end().catch(() => {})
      if (!closed) setTimeout(() => connect().catch((e) => log.warn({ err: e }, 'reconnect failed')), 1000).unref()
    })
    await client.connect()
    await client.query(`LISTEN ${CHANNEL}`)
    listener = client
  }
  await connect()

  return {
    async siteChanged(slug) {
      onChange(slug)
      await sql`select pg_notify(${CHANNEL}, ${`${instance} ${slug}`})`.execute(db.kysely)
    },
    async close() {
      closed = true
      await listener?.end()
    },
  }
}
