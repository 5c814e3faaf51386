/**
 * `plinth deploy --vendor`: the external scripts, stylesheets, fonts and images a folder's pages
 * and stylesheets name, fetched from this machine with the platform's fetch and put in the
 * bundle (vendoring/vendoring.ts), before the bundle is checked and sent. The fetch follows at
 * most the allowed redirects by hand, each to http(s) only, stops reading past the size cap and
 * gives up at the time limit; it sends no cookie and no credential.
 */
import { createHash } from 'node:crypto'
import type { BundleLimits } from '../core/limits.ts'
import { contentTypeFor, HTML_CONTENT_TYPE } from '../publishing/content-rules.ts'
import { bytesToText } from '../publishing/bundle-paths.ts'
import type { VendoredFile, VendorFailure, VendorFetch, VendorSource } from '../vendoring/vendoring.ts'
import { vendorFiles } from '../vendoring/vendoring.ts'
import type { LocalFile } from './site-folder.ts'

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** Fetches with the platform's fetch, within the limits; an Error saying why otherwise. */
export const plainVendorFetch: VendorFetch = async (url, limits) => {
  const signal = AbortSignal.timeout(limits.timeoutMs)
  let current = new URL(url)
  try {
    for (let hop = 0; ; hop++) {
      const response = await fetch(current, { redirect: 'manual', signal, headers: { 'user-agent': 'plinth-client', accept: '*/*' } })
      if (REDIRECTS.has(response.status)) {
        await response.body?.cancel()
        const location = response.headers.get('location')
        if (!location) throw new Error(`${current.href} answered HTTP ${response.status} without a Location to redirect to.`)
        if (hop >= limits.maxRedirects) throw new Error(`${url} redirected more than ${limits.maxRedirects} times; gave up.`)
        current = new URL(location, current)
        if (current.protocol !== 'http:' && current.protocol !== 'https:')
          throw new Error(`${url} redirected to a ${current.protocol} URL: only http and https are fetched.`)
        continue
      }
      if (!response.ok) {
        await response.body?.cancel()
        throw new Error(`${current.href} answered HTTP ${response.status}.`)
      }
      return { bytes: await readCapped(response, limits.maxBytes, current.href), contentType: response.headers.get('content-type'), finalUrl: current.href }
    }
  } catch (error) {
    if (signal.aborted) throw new Error(`Fetching ${url} took longer than ${limits.timeoutMs} ms; stopped.`, { cause: error })
    if (error instanceof TypeError) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      throw new Error(`Fetching ${current.href} failed: ${cause?.code ?? cause?.message ?? error.message}.`, { cause: error })
    }
    throw error
  }
}

async function readCapped(response: Response, maxBytes: number, href: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of response.body ?? []) {
    size += chunk.length
    if (size > maxBytes) {
      // Leaving the loop cancels the download.
      throw new Error(`${href} is larger than ${maxBytes} bytes, the most a file may hold; stopped reading.`)
    }
    chunks.push(Buffer.from(chunk))
  }
  return Buffer.concat(chunks, size)
}

export interface VendoredFolder {
  files: LocalFile[]
  vendored: VendoredFile[]
  failures: VendorFailure[]
}

/** The folder's files with the external ones brought in (pages and stylesheets rewritten, copies added), or why not. */
export async function vendorFolder(files: LocalFile[], limits: BundleLimits, fetch: VendorFetch): Promise<VendoredFolder> {
  const sources: VendorSource[] = []
  for (const file of files) {
    const type = contentTypeFor(file.path)
    if (type === HTML_CONTENT_TYPE || type === 'text/css')
      sources.push({ path: file.path, kind: type === 'text/css' ? 'css' : 'html', text: bytesToText(file.bytes) })
  }
  const outcome = await vendorFiles(sources, {
    fetch,
    bundleLimits: limits,
    bundle: { files: files.length, bytes: files.reduce((sum, f) => sum + f.bytes.length, 0), paths: new Set(files.map((f) => f.path)) },
  })
  if (outcome.failures.length > 0) return { files, vendored: [], failures: outcome.failures }
  const local = (path: string, bytes: Buffer): LocalFile => ({ path, bytes, sha256: createHash('sha256').update(bytes).digest('hex') })
  const changed = files.map((file) => {
    const text = outcome.rewritten.get(file.path)
    return text === undefined ? file : local(file.path, Buffer.from(text, 'utf8'))
  })
  const added = outcome.added.map((copy) => local(copy.path, copy.bytes))
  return { files: [...changed, ...added].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)), vendored: outcome.vendored, failures: [] }
}
