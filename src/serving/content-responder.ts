/**
 * The port through which the site server asks for paths that are not files of the version
 * (entries, listings, feeds), implemented by site-content/site-content.ts.
 */
import type { BuiltinPage } from './security-headers.ts'
import type { PreparedFile, PreparedVersion } from './site-version.ts'

/**
 * What a content path answers. A page is a PreparedFile (its bytes in memory or in the blob store)
 * and is served exactly like a published file; a fixed page (the owner's error page) is sent as
 * it is; a redirect keeps the request's query string; missing is the site's 404. A file answered
 * for one version and host label must not be answered for another: its headers are kept on it.
 */
export type ContentAnswer =
  { kind: 'file'; file: PreparedFile } | { kind: 'page'; page: BuiltinPage } | { kind: 'redirect'; location: string } | { kind: 'missing' }

/** Counters of a content responder: `renders` is how many pages it has built. */
export interface ContentStats {
  renders: number
  cached: number
}

/** Answers site paths that are not files of the version (entries, listings, feeds; see site-content/site-content.ts). */
export interface ContentResponder {
  /**
   * undefined when the path (origin-form, with its query) is none of its own; otherwise the answer,
   * synchronously when it is cached, else a promise of it. The bundle's own `sitemap.xml` is
   * offered here too: undefined serves the file as it is.
   */
  answer(target: string, version: PreparedVersion): ContentAnswer | Promise<ContentAnswer> | undefined
  invalidate(slug: string): void
  invalidateAll(): void
  stats(): ContentStats
}

/** For a site server that serves published files only: every other path is the site's 404. */
export const NO_CONTENT: ContentResponder = { answer: () => undefined, invalidate: () => {}, invalidateAll: () => {}, stats: () => ({ renders: 0, cached: 0 }) }
