/**
 * The counting side of traffic, on the site server's path: each finished answer to a live site is
 * added to an in-memory bucket of its site and UTC hour (plain counters, bounded top lists and the
 * set of visitors), which the flusher (traffic-flush.ts) takes away and adds to the database
 * every few seconds. No cookie, no script: a visitor is a hash of the address and user agent under
 * the day's random salt, made at the flush; the address and agent are kept in no other form.
 */
import { hash } from 'node:crypto'
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http'
import { isbot } from 'isbot'
import { TRAFFIC_AGENTS_PER_ADDRESS } from '../core/limits.ts'
import { type FinishedResponses, PlinthResponse } from '../ops/request-tracking.ts'
import { hostName } from '../serving/site-host.ts'
import type { SiteTraffic } from '../serving/site-traffic.ts'

import { HOUR_MS } from './traffic-range.ts'

/** Distinct keys of one kind a bucket keeps; the rest are counted under OTHER_KEY. */
export const MAX_KEYS_PER_HOUR = 100
/** What the keys past MAX_KEYS_PER_HOUR are counted under. */
export const OTHER_KEY = '(other)'
/** Paths and referring pages are cut to this many characters. */
const MAX_KEY_CHARS = 300
/** User agents remembered with their bot verdict (the memo starts over when full). */
const AGENT_MEMO_SIZE = 2000

/** One site's counts in one UTC hour, as this instance saw them since its last flush. */
export interface TrafficBucket {
  websiteId: string
  /** Hours since the epoch (UTC). */
  hour: number
  requests: number
  pageViews: number
  bytes: number
  bots: number
  notFound: number
  /** Answers by status class: [2xx, 3xx, 4xx, 5xx] (1xx are not kept). */
  statuses: [number, number, number, number]
  paths: Map<string, number>
  referrers: Map<string, number>
  /** Paths answered 404, keyed `path\nreferring page`. */
  missing: Map<string, number>
  /**
   * The visitors of the page views: address to user agents, held in memory only until the next
   * flush (a few seconds), which writes each as its hash under the day's salt and nothing else.
   * Hashing at the flush costs once per visitor and flush, not once per page view.
   */
  visitors: Map<string, Set<Agent>>
}

/** A user agent as the counter knows it: one object per distinct value, so sets of them hash by identity, not by a long string. */
export interface Agent {
  agent: string
  bot: boolean
}

export interface TrafficCounterOptions {
  /** The client's address, as the form posts take it (trusted proxies considered). */
  clientAddress: (req: IncomingMessage) => string
  now: () => number
}

export const newBucket = (websiteId: string, hour: number): TrafficBucket => ({
  websiteId,
  hour,
  requests: 0,
  pageViews: 0,
  bytes: 0,
  bots: 0,
  notFound: 0,
  statuses: [0, 0, 0, 0],
  paths: new Map(),
  referrers: new Map(),
  missing: new Map(),
  visitors: new Map(),
})

/** Adds `n` to a key of a bounded top list. */
export function addKey(keys: Map<string, number>, key: string, n = 1): void {
  const had = keys.get(key)
  if (had !== undefined) keys.set(key, had + n)
  else if (keys.size < MAX_KEYS_PER_HOUR || key === OTHER_KEY) keys.set(key, n)
  else keys.set(OTHER_KEY, (keys.get(OTHER_KEY) ?? 0) + n)
}

/** Adds a visitor (an address and a user agent) to a bucket: at most TRAFFIC_AGENTS_PER_ADDRESS agents an address. */
function addVisitor(bucket: TrafficBucket, address: string, agent: Agent): void {
  const agents = bucket.visitors.get(address)
  if (agents === undefined) bucket.visitors.set(address, new Set([agent]))
  else if (agents.size < TRAFFIC_AGENTS_PER_ADDRESS) agents.add(agent)
}

/** A visitor's hash: the day's salt, the address and the user agent, SHA-256, cut to 128 bits. */
export const visitorHash = (salt: string, raw: string): string => hash('sha256', salt + raw, 'base64url').slice(0, 22)

/** `Content-Length` and whether `Content-Type` is HTML, read from a flat header list. */
function answerOf(headers: readonly OutgoingHttpHeader[] | undefined): { length: number; html: boolean } {
  let length = 0
  let html = false
  if (headers === undefined) return { length, html }
  let found = 0
  // The site server's lists start with both (response-headers.ts): the loop ends after two names.
  for (let i = 0; i < headers.length - 1 && found < 2; i += 2) {
    const name = headers[i]
    if (name === 'Content-Length') {
      length = Number(headers[i + 1]) || 0
      found++
    } else if (name === 'Content-Type') {
      html = String(headers[i + 1]).startsWith('text/html')
      found++
    }
  }
  return { length, html }
}

/** The host of an http(s) URL, lowercased, without port or user info; null for anything else. */
export function hostOf(url: string): string | null {
  const match = /^https?:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]+)/i.exec(url)
  return match ? match[1]!.toLowerCase() : null
}

/** A referring page as kept: scheme, host and path, no query or fragment, bounded. */
const pageOf = (url: string): string => {
  const cut = url.search(/[?#]/)
  return (cut === -1 ? url : url.slice(0, cut)).slice(0, MAX_KEY_CHARS)
}

export class TrafficCounter implements SiteTraffic {
  private buckets = new Map<string, TrafficBucket>()
  /** The bucket counted into last (in `buckets` until the next drain). */
  private last: TrafficBucket | null = null
  /** Salts by day (days since the epoch), set by the flusher. */
  private readonly salts = new Map<number, string>()
  private readonly agents = new Map<string, Agent>()
  private readonly finisher: FinishedResponses = { finished: (res) => this.finished(res) }

  constructor(private readonly options: TrafficCounterOptions) {}

  observe(websiteId: string, req: IncomingMessage, res: ServerResponse): void {
    if (res instanceof PlinthResponse) {
      // Read when node:http detaches the socket, the moment every response has: no listener added.
      res.observedSite = websiteId
      res.observer = this.finisher
    } else {
      res.once('finish', () => this.count(websiteId, req, res.statusCode, undefined))
    }
  }

  /** The buckets counted since the last call, taken away (the flusher adds them to the database). */
  drain(): TrafficBucket[] {
    if (this.buckets.size === 0) return []
    const taken = [...this.buckets.values()]
    this.buckets = new Map()
    this.last = null
    return taken
  }

  /** Puts back buckets a flush could not write, to be written with the next. */
  restore(buckets: readonly TrafficBucket[]): void {
    for (const old of buckets) {
      const into = this.bucket(old.websiteId, old.hour)
      into.requests += old.requests
      into.pageViews += old.pageViews
      into.bytes += old.bytes
      into.bots += old.bots
      into.notFound += old.notFound
      for (let i = 0; i < 4; i++) into.statuses[i]! += old.statuses[i]!
      for (const [key, n] of old.paths) addKey(into.paths, key, n)
      for (const [key, n] of old.referrers) addKey(into.referrers, key, n)
      for (const [key, n] of old.missing) addKey(into.missing, key, n)
      for (const [address, agents] of old.visitors) for (const agent of agents) addVisitor(into, address, agent)
    }
  }

  /** The salt of a day (days since the epoch), as every instance has it; salts of days gone are forgotten. */
  setSalt(day: number, salt: string): void {
    this.salts.set(day, salt)
    for (const known of this.salts.keys()) if (known < day - 1) this.salts.delete(known)
  }

  saltOf(day: number): string | undefined {
    return this.salts.get(day)
  }

  private finished(res: PlinthResponse): void {
    const site = res.observedSite
    if (site !== undefined) this.count(site, res.req, res.statusCode, res.headerList)
  }

  private bucket(websiteId: string, hour: number): TrafficBucket {
    // Requests come in runs to one site: the last bucket is most often the one.
    const last = this.last
    if (last !== null && last.websiteId === websiteId && last.hour === hour) return last
    const key = `${websiteId} ${hour}`
    let bucket = this.buckets.get(key)
    if (bucket === undefined) this.buckets.set(key, (bucket = newBucket(websiteId, hour)))
    return (this.last = bucket)
  }

  /** The user agent's entry, with whether it is a bot's (isbot's patterns are costly: each value is judged once). */
  private agentOf(agent: string): Agent {
    let known = this.agents.get(agent)
    if (known === undefined) {
      // No user agent at all is a script's request, not a person's browser.
      known = { agent, bot: agent === '' || isbot(agent) }
      if (this.agents.size >= AGENT_MEMO_SIZE) this.agents.clear()
      this.agents.set(agent, known)
    }
    return known
  }

  /** Adds one finished answer to its site's bucket of the current hour. */
  count(websiteId: string, req: IncomingMessage, status: number, headers: readonly OutgoingHttpHeader[] | undefined): void {
    const now = this.options.now()
    const hour = Math.floor(now / HOUR_MS)
    const bucket = this.bucket(websiteId, hour)
    const { length, html } = answerOf(headers)
    const head = req.method === 'HEAD'
    bucket.requests++
    if (!head && status !== 304 && status !== 204) bucket.bytes += length
    const statusClass = Math.floor(status / 100) - 2
    if (statusClass >= 0 && statusClass < 4) bucket.statuses[statusClass]!++
    const agent = this.agentOf(req.headers['user-agent'] ?? '')
    if (agent.bot) {
      bucket.bots++
      return
    }
    const url = req.url ?? '/'
    const query = url.indexOf('?')
    const path = (query === -1 ? url : url.slice(0, query)).slice(0, MAX_KEY_CHARS)
    const referer = req.headers.referer
    if (status === 404) {
      bucket.notFound++
      const from = referer !== undefined && hostOf(referer) !== null ? pageOf(referer) : ''
      addKey(bucket.missing, `${path}\n${from}`)
      return
    }
    if (status < 200 || status > 299 || !html || req.method !== 'GET') return
    bucket.pageViews++
    addKey(bucket.paths, path)
    if (referer !== undefined) {
      const host = hostOf(referer)
      if (host !== null && host !== hostName(req.headers.host ?? '')) addKey(bucket.referrers, host)
    }
    addVisitor(bucket, this.options.clientAddress(req), agent)
  }
}
