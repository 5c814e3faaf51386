/**
 * The site check of a bundle as a publish runs it, in this thread: the authoring rules with the
 * files' facts, then the pipeline's site check step (publishing/bundle-site-check.ts), with no
 * worker pool unless one is given. Bundles given here are inline, so no blob is read.
 */
import assert from 'node:assert/strict'
import type { BlobStore } from '../../src/blobs/blob-store.ts'
import { BUNDLE_LIMITS } from '../../src/core/limits.ts'
import type { Warning } from '../../src/core/schemas.ts'
import { type BundleFileInput, finishCheck, inspectBundle } from '../../src/publishing/authoring-rules.ts'
import { BundleSiteCheck } from '../../src/publishing/bundle-site-check.ts'
import { scanTexts } from '../../src/publishing/content-rules.ts'
import type { ContentScanPool } from '../../src/publishing/content-scans.pool.ts'

const NO_BLOBS = new Proxy({} as BlobStore, {
  get: () => () => Promise.reject(new Error('an inline bundle reads no blob')),
})

/** The warnings of a bundle that breaks no rule (asserted), as a publish gives them. */
export async function siteWarnings(
  files: BundleFileInput[],
  options: { collectionNames?: string[]; httpsSites?: boolean; scans?: ContentScanPool } = {},
): Promise<Warning[]> {
  const collectionNames = options.collectionNames ?? []
  const inspection = inspectBundle(files, BUNDLE_LIMITS, { collectionNames, httpsSites: options.httpsSites ?? false })
  const outcomes = scanTexts(
    inspection.scans.map((scan) => ({ path: scan.path, contentType: scan.contentType, text: scan.text! })),
    BUNDLE_LIMITS.maxViolations,
    true,
  )
  const check = finishCheck(
    inspection,
    outcomes.map((outcome) => outcome.found),
  )
  assert.deepEqual(check.violations, [], 'the bundle breaks no authoring rule')
  return new BundleSiteCheck(NO_BLOBS, options.scans ?? null).check(inspection, outcomes, check.warnings, collectionNames)
}

/** A page's head that gives the site check nothing to say: language, viewport and title. */
export const HEAD = (title = 'Page') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>`

/** A clean page: HEAD, then `body`. */
export const page = (path: string, body: string, title?: string): BundleFileInput => ({ path, content: `${HEAD(title)}</head><body>${body}</body></html>` })

/** The warnings as [code, path, line] triples, for comparing. */
export const triples = (warnings: Warning[]) => warnings.map((w) => [w.code, w.path, w.line])

/** A PNG's first bytes: signature and IHDR with this size, then `extra` zero bytes (a header is all the check reads). */
export function pngOf(width: number, height: number, extra = 0): Buffer {
  const ihdr = Buffer.alloc(25)
  ihdr.writeUInt32BE(13, 0)
  ihdr.write('IHDR', 4, 'latin1')
  ihdr.writeUInt32BE(width, 8)
  ihdr.writeUInt32BE(height, 12)
  ihdr.writeUInt8(8, 16)
  ihdr.writeUInt8(6, 17)
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr, Buffer.alloc(extra)])
}
