import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type pg from 'pg'
import { type Db, pgDriver } from '../db/connect.ts'
import { currentSchema } from '../db/own-schema-introspector.ts'
import type { CustomHosts } from './custom-hosts.ts'
import type { SiteServer } from './site-handler.ts'

const CHANNEL = 'plinth_site_changed'

/**
 * Told whenever what a slug serves changes (a publish, a promotion, an entry or collection
 * edit, a password), so that every serving cache, here and on other instances, drops what it
 * holds for it, previews included; or, keyed by a draft's preview label (`{slug}--d{token}`),
 * whenever a draft changes or goes, which drops that preview alone.
 */
export interface SiteEvents {
  siteChanged(key: string): Promise<void>
}

export interface SiteEventBus extends SiteEvents {
  /** A custom domain started or stopped serving a site. */
  domainChanged(domain: string): Promise<void>
  close(): Promise<void>
}

/**
 * What each instance does with the events. A handler may return a promise of its work: the
 * instance that makes a change waits for it before it goes on, so that its own next request sees
 * the change (a domain verified here serves from here as soon as verifying answers).
 */
export interface SiteEventHandlers {
  siteChanged(slug: string): void | Promise<void>
  domainChanged(domain: string): void | Promise<void>
  /** Events may have been missed: drop every cache. */
  resync(): void
}

/** Domain events travel on the same channel as slugs, marked by a prefix no slug has. */
const DOMAIN_PREFIX = 'domain:'

/** How often caches are dropped while the listener is away, and how soon it tries to come back. */
const RESYNC_INTERVAL_MS = 1000

/**
 * Tells every serving cache that a slug changed. On SQLite there is one server process, so the
 * local cache is all there is. On PostgreSQL, where several instances share the database, the
 * change is also published with NOTIFY and every instance LISTENs, so a change made through one
 * instance is visible on the next request to any other.
 *
 * NOTIFY reaches every connected listener of a committed change; what a listener misses is what
 * happens while its connection is down. So when it drops, `onResync` (every cache dropped) runs at
 * once and then every RESYNC_INTERVAL_MS until the listener is back, and once more when it is:
 * an instance serves nothing older than about a second, notification or not.
 */
export async function createSiteEvents(
  db: Db,
  databaseUrl: string | null,
  handlers: SiteEventHandlers,
  log: { warn(obj: unknown, msg?: string): void; info(obj: unknown, msg?: string): void },
): Promise<SiteEventBus> {
  const onChange = (key: string) => (key.startsWith(DOMAIN_PREFIX) ? handlers.domainChanged(key.slice(DOMAIN_PREFIX.length)) : handlers.siteChanged(key))
  const onResync = () => handlers.resync()
  if (db.dialect !== 'postgres' || !databaseUrl) {
    return { siteChanged: async (slug) => handlers.siteChanged(slug), domainChanged: async (domain) => handlers.domainChanged(domain), close: async () => {} }
  }

  // Our own notifications come back to us: the change was applied locally already, and applying
  // it again later would drop caches rebuilt in between. And the channel is the database's: an
  // install in another schema of it hears ours, and we theirs. So the payload is
  // `{instance}@{schema} {key}`, and a change is applied by the other instances of this schema
  // alone. A payload without a schema (`{instance} {key}`, as instances of earlier versions send it
  // during an upgrade) is applied by every other instance.
  const instance = randomUUID()
  const schema = await currentSchema(db.kysely)
  const sender = `${instance}@${schema}`
  const received = (payload: string): void => {
    // A key has no space; a schema's name may.
    const space = payload.lastIndexOf(' ')
    // Another instance's change: nobody waits for it here (the handlers report their own failures).
    if (space === -1) return void onChange(payload)
    const from = payload.slice(0, space)
    const at = from.indexOf('@')
    const applies = at === -1 ? from !== instance : from.slice(0, at) !== instance && from.slice(at + 1) === schema
    if (applies) void onChange(payload.slice(space + 1))
  }
  let listener: pg.Client | null = null
  let closed = false
  let resyncing: NodeJS.Timeout | null = null

  const connect = async (): Promise<void> => {
    const client = new (pgDriver().Client)({ connectionString: databaseUrl })
    let lost = false
    const onLost = (err?: unknown) => {
      if (lost) return
      lost = true
      if (listener === client) listener = null
      // The connection is already broken; ending it only frees the client, and its failure says nothing new.
      client.end().catch(() => {})
      if (closed) return
      log.warn({ err }, 'site change listener lost its connection; caches are dropped every second until it is back')
      onResync()
      resyncing ??= setInterval(onResync, RESYNC_INTERVAL_MS).unref()
      setTimeout(reconnect, RESYNC_INTERVAL_MS).unref()
    }
    // Until LISTEN holds, a failure is the rejection of connect(); only a working listener is lost.
    let listening = false
    client.on('notification', (message) => message.payload && received(message.payload))
    client.on('error', (err) => listening && onLost(err))
    client.on('end', () => listening && onLost())
    try {
      await client.connect()
      await client.query(`LISTEN ${CHANNEL}`)
    } catch (error) {
      // The error to report is the one thrown below; ending the half-open client may fail with it.
      client.end().catch(() => {})
      throw error
    }
    listening = true
    listener = client
  }
  const reconnect = (): void => {
    if (closed) return
    connect().then(
      () => {
        if (resyncing) clearInterval(resyncing)
        resyncing = null
        // What changed while nobody listened is read afresh.
        onResync()
        log.info({}, 'site change listener is back')
      },
      (err: unknown) => {
        log.warn({ err }, 'site change listener could not reconnect; trying again')
        setTimeout(reconnect, RESYNC_INTERVAL_MS).unref()
      },
    )
  }
  await connect()

  const announce = async (key: string): Promise<void> => {
    await onChange(key)
    try {
      await sql`select pg_notify(${CHANNEL}, ${`${sender} ${key}`})`.execute(db.kysely)
    } catch (err) {
      // A notify fails when the database is out of reach, so the other instances' listeners are lost
      // too and they drop their caches until it is back (see onLost); logged here for callers who do not wait.
      log.warn({ err, key }, 'site change could not be announced to other instances')
      throw err
    }
  }
  return {
    siteChanged: (slug) => announce(slug),
    domainChanged: (domain) => announce(DOMAIN_PREFIX + domain),
    async close() {
      closed = true
      if (resyncing) clearInterval(resyncing)
      await listener?.end()
    },
  }
}

/**
 * The handlers of a server's site events: a change drops what the site server holds for the slug
 * (or everything, on a resync) and reads the custom domains that serve it again.
 */
export function servingHandlers(
  siteServer: Pick<SiteServer, 'invalidate' | 'invalidateAll'>,
  customHosts: Pick<CustomHosts, 'load' | 'refresh' | 'refreshSlug'>,
  log: { warn(obj: unknown, msg?: string): void },
): SiteEventHandlers {
  const reportFailure = (what: string) => (err: unknown) => log.warn({ err }, `reading custom domains again failed (${what})`)
  return {
    siteChanged: (slug) => {
      siteServer.invalidate(slug)
      return customHosts.refreshSlug(slug).catch(reportFailure(slug))
    },
    domainChanged: (domain) => customHosts.refresh(domain).catch(reportFailure(domain)),
    resync: () => {
      siteServer.invalidateAll()
      customHosts.load().catch(reportFailure('all'))
    },
  }
}
