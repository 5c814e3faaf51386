/**
 * The two caches behind site serving:
 *  - ManifestCache: host label (`slug`, `slug--vN` or a draft's `slug--d{token}`) -> prepared
 *    version, LRU bounded by entries and total files, with a short-lived negative cache and shared
 *    in-flight lookups.
 *  - BlobCache: blob hash + encoding -> bytes, LRU bounded by bytes, shared in-flight reads.
 * Both answer synchronously on a hit so the warm request path never awaits.
 */
import { LRUCache } from 'lru-cache'
import type { BlobStore } from '../blobs/blob-store.ts'
import type { SiteHost } from './site-host.ts'
import type { ServedFile, ServedVersion, SiteLookup } from './site-lookup.ts'
import { bytesToText } from '../publishing/bundle-paths.ts'
import { parseHeaders } from '../publishing/header-rules.ts'
import { parseRedirects } from '../publishing/redirect-rules.ts'
import { type PreparedFile, type PreparedLoad, type PreparedVariant, type PreparedVersion, prepareVersion } from './site-version.ts'

/** How much a server's manifest cache holds, and how long it remembers a label that names no site. */
export interface ManifestCacheLimits {
  /** Max cached versions. */
  maxEntries: number
  /** Max files over all cached versions, bounds memory. */
  maxFiles: number
  /** How long an unknown label is remembered. */
  negativeTtlMs: number
  /** Max remembered unknown labels. */
  maxNegative: number
}

/** The limits of a server's manifest cache. */
export const MANIFEST_CACHE_LIMITS: Readonly<ManifestCacheLimits> = Object.freeze({
  maxEntries: 10_000,
  maxFiles: 500_000,
  negativeTtlMs: 5_000,
  maxNegative: 10_000,
})

export interface ManifestCacheOptions extends ManifestCacheLimits {
  lookup: SiteLookup
  /** The clock unknown labels expire by, in ms (Date.now on a server). */
  now: () => number
  /** Called for manifest entries with an invalid hash or size (they are left out). */
  onInvalidFile: (label: string, file: ServedFile) => void
  /** Reads a blob's bytes: a version's `_redirects` and `_headers` are read and parsed when it is loaded. */
  readBlob: (hash: string) => Promise<Buffer>
}

/**
 * How long a version whose compressed variants are still being made is kept before it is read
 * again. The instance that made them says so at once (a site event); this bounds how long any
 * other instance, or a preview, serves those files uncompressed if that is lost.
 */
const PENDING_VARIANTS_TTL_MS = 1_000
/**
 * Each further read that finds the same version's variants still pending doubles the wait, up to
 * this: variants whose making failed stay pending until the next start (blob-variants.ts), and
 * such a version is then read again every few minutes, not every second for as long as it lives.
 */
const PENDING_VARIANTS_MAX_TTL_MS = 5 * 60_000

/** Parsed `_redirects` and `_headers` files kept by content (a file's rules are parsed once per instance, however often its site is reloaded). */
const PARSED_RULE_FILES = 1000

interface InFlight {
  promise: Promise<PreparedVersion | null>
  /** Set by invalidate(): the result must not be cached. */
  stale: boolean
}

export class ManifestCache {
  private readonly versions: LRUCache<string, PreparedVersion>
  /** Unknown label -> when it is forgotten (ms by `now`). */
  private readonly unknown: LRUCache<string, number>
  private readonly inFlight = new Map<string, InFlight>()
  /** slug -> its cached preview labels (versions' and drafts'): dropped when the slug changes, never served for another site. */
  private readonly previews = new Map<string, Set<string>>()
  private readonly parsedRules = new LRUCache<string, object>({ max: PARSED_RULE_FILES })
  /** Label and version -> reads in a row that found its variants pending (see PENDING_VARIANTS_MAX_TTL_MS). */
  private readonly pendingReads = new LRUCache<string, number>({ max: 10_000 })
  /** Lookups answered from the cache (a version, or a label remembered as unknown) and lookups that need the database: for the metrics. */
  hits = 0
  misses = 0

  constructor(private readonly options: ManifestCacheOptions) {
    this.versions = new LRUCache<string, PreparedVersion>({
      max: options.maxEntries,
      maxSize: options.maxFiles,
      sizeCalculation: (version) => version.files.size + version.templates.size + 1,
      dispose: (version, label) => {
        if (!version.preview) return
        const labels = this.previews.get(version.slug)
        if (labels === undefined) return
        labels.delete(label)
        if (labels.size === 0) this.previews.delete(version.slug)
      },
    })
    // Expiry is checked against `now` here rather than by lru-cache's own TTL timers, so it
    // follows one clock that the caller chooses.
    this.unknown = new LRUCache<string, number>({ max: options.maxNegative })
  }

  /** Cached version, null for a remembered unknown label, undefined when a lookup is needed. */
  get(label: string): PreparedVersion | null | undefined {
    const cached = this.cached(label)
    if (cached === undefined) this.misses++
    else this.hits++
    return cached
  }

  private cached(label: string): PreparedVersion | null | undefined {
    const version = this.versions.get(label)
    if (version !== undefined) {
      // Most versions are never read again: no clock to ask.
      if (version.recheckAt === Infinity || this.options.now() < version.recheckAt) return version
      this.versions.delete(label)
      return undefined
    }
    const until = this.unknown.get(label)
    if (until === undefined) return undefined
    if (this.options.now() < until) return null
    this.unknown.delete(label)
    return undefined
  }

  /** A version whose variants are pending is read again after a while, the longer the more often it was found so. */
  private scheduleRecheck(label: string, load: PreparedLoad): void {
    const key = `${label} ${load.version.versionId}`
    if (!load.variantsPending) {
      this.pendingReads.delete(key)
      return
    }
    const reads = this.pendingReads.get(key) ?? 0
    this.pendingReads.set(key, reads + 1)
    const recheckAt = this.options.now() + Math.min(PENDING_VARIANTS_TTL_MS * 2 ** reads, PENDING_VARIANTS_MAX_TTL_MS)
    load.version.recheckAt = Math.min(load.version.recheckAt, recheckAt)
  }

  /** Looks the label up (sharing a lookup already in flight) and caches the result. */
  load(label: string, site: SiteHost): Promise<PreparedVersion | null> {
    const running = this.inFlight.get(label)
    if (running !== undefined) return running.promise
    const entry: InFlight = { stale: false, promise: undefined as unknown as Promise<PreparedVersion | null> }
    entry.promise = this.fetch(label, site, entry).finally(() => {
      if (this.inFlight.get(label) === entry) this.inFlight.delete(label)
    })
    this.inFlight.set(label, entry)
    return entry.promise
  }

  private async fetch(label: string, site: SiteHost, entry: InFlight): Promise<PreparedVersion | null> {
    const found = await this.find(site)
    // What expires (a draft) is served until then, and read again then: by then it is gone.
    const expiresAt = found?.expiresAt == null ? Infinity : Date.parse(found.expiresAt)
    const served = found !== null && this.options.now() < expiresAt ? found : null
    const preview = 'draftId' in site || site.version !== null
    const load = served === null ? null : prepareVersion(served, { label, preview }, (file) => this.options.onInvalidFile(label, file))
    if (load !== null) {
      load.version.recheckAt = expiresAt
      this.scheduleRecheck(label, load)
      await this.readRules(load)
    }
    const prepared = load?.version ?? null
    if (entry.stale) return prepared
    if (prepared === null) {
      this.unknown.set(label, this.options.now() + this.options.negativeTtlMs)
    } else {
      this.unknown.delete(label)
      this.versions.set(label, prepared)
      if (preview) {
        let labels = this.previews.get(site.slug)
        if (labels === undefined) this.previews.set(site.slug, (labels = new Set()))
        labels.add(label)
      }
    }
    if (!preview) this.dropForeignPreviews(site.slug, prepared?.websiteId ?? null)
    return prepared
  }

  private find(site: SiteHost): Promise<ServedVersion | null> {
    const { lookup } = this.options
    if ('draftId' in site) return lookup.findDraft(site.slug, site.draftId)
    return site.version === null ? lookup.findLive(site.slug) : lookup.findVersion(site.slug, site.version)
  }

  /** Parses the version's `_redirects` and `_headers` (each blob once, then from memory). */
  private async readRules({ version, ruleFiles }: PreparedLoad): Promise<void> {
    const { redirects, headers } = ruleFiles
    if (redirects !== null) version.redirects = await this.parsed(redirects, 'redirects', parseRedirects)
    if (headers !== null) version.headerRules = await this.parsed(headers, 'headers', parseHeaders)
  }

  private async parsed<T extends object>(file: PreparedFile, kind: string, parse: (text: string) => { rules: T }): Promise<T> {
    const key = `${kind}:${file.identity.hash}`
    const hit = this.parsedRules.get(key)
    if (hit !== undefined) return hit as T
    // Checked at publish: what is stored parses; a rule that fails anyway is simply absent.
    const { rules } = parse(bytesToText(await this.options.readBlob(file.identity.hash)))
    this.parsedRules.set(key, rules)
    return rules
  }

  /** Drops cached previews of this slug that belong to another website (the slug changed hands). */
  private dropForeignPreviews(slug: string, websiteId: string | null): void {
    const labels = this.previews.get(slug)
    if (labels === undefined) return
    for (const label of [...labels]) {
      const version = this.versions.peek(label)
      if (version === undefined || version.websiteId !== websiteId) this.versions.delete(label)
    }
  }

  /**
   * Forgets what a site event names. A slug: its live version, every preview of it (what changed
   * may be the site's password, or its very existence) and the labels of it remembered as unknown
   * (a preview of the version just published may have been probed before it existed). A draft's
   * label: that preview alone.
   */
  invalidate(key: string): void {
    this.forget(key)
    const previews = this.previews.get(key)
    if (previews !== undefined) for (const label of [...previews]) this.forget(label)
    const prefix = `${key}--`
    for (const label of [...this.unknown.keys()]) if (label.startsWith(prefix)) this.unknown.delete(label)
    for (const label of [...this.inFlight.keys()]) if (label.startsWith(prefix)) this.forget(label)
  }

  /** Forgets one label: its version, its unknown mark, and the result of a lookup of it under way. */
  private forget(label: string): void {
    this.versions.delete(label)
    this.unknown.delete(label)
    const running = this.inFlight.get(label)
    if (running !== undefined) {
      running.stale = true
      this.inFlight.delete(label)
    }
  }

  /** Forgets everything: what changed while change notifications were lost is read afresh. */
  invalidateAll(): void {
    this.versions.clear()
    this.unknown.clear()
    for (const running of this.inFlight.values()) running.stale = true
    this.inFlight.clear()
  }

  get size(): number {
    return this.versions.size
  }
}

const EMPTY = Buffer.alloc(0)

export class BlobCache {
  private readonly cache: LRUCache<string, Buffer> | null
  private readonly maxCacheable: number
  private readonly inFlight = new Map<string, Promise<Buffer>>()
  /** Reads of file bytes answered by the cache, and reads that go to the blob store (or join one under way): for the metrics. */
  hits = 0
  misses = 0

  constructor(
    private readonly store: BlobStore,
    cacheBytes: number,
  ) {
    const budget = Number.isSafeInteger(cacheBytes) && cacheBytes > 0 ? cacheBytes : 0
    this.maxCacheable = Math.floor(budget / 4)
    this.cache = budget > 0 ? new LRUCache<string, Buffer>({ maxSize: budget, sizeCalculation: (bytes) => Math.max(1, bytes.length) }) : null
  }

  /** Cached bytes of this variant, or undefined. */
  peek(v: PreparedVariant): Buffer | undefined {
    if (v.bytes !== null) return v.bytes
    if (v.size === 0) return EMPTY
    const bytes = this.cache === null ? undefined : this.cache.get(v.key)
    if (bytes === undefined) this.misses++
    else this.hits++
    return bytes
  }

  /** Reads the variant from the store (sharing a read already in flight) and caches it if small enough. */
  load(v: PreparedVariant): Promise<Buffer> {
    const running = this.inFlight.get(v.key)
    if (running !== undefined) return running
    const promise = this.read(v).finally(() => this.inFlight.delete(v.key))
    this.inFlight.set(v.key, promise)
    return promise
  }

  private async read(v: PreparedVariant): Promise<Buffer> {
    const bytes = await this.store.get(v.hash, v.encoding)
    if (bytes.length !== v.size) {
      throw new Error(`blob ${v.key} has ${bytes.length} bytes, the manifest says ${v.size}`)
    }
    if (this.cache !== null && bytes.length <= this.maxCacheable) this.cache.set(v.key, bytes)
    return bytes
  }

  get bytes(): number {
    return this.cache === null ? 0 : this.cache.calculatedSize
  }

  get entries(): number {
    return this.cache === null ? 0 : this.cache.size
  }
}
