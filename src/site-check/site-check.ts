/**
 * The site check: what a careful reviewer would tell the author of a bundle that breaks no
 * authoring rule, from the facts the rules gathered in each file as they parsed it
 * (file-facts.ts): broken links and anchors, pages without a title, a language, a viewport or
 * images' alt text, duplicate ids, heavy pages and oversized images (page-weight.ts), files
 * nothing uses (unused-files.ts), beside the warnings the rules themselves give
 * (BLOCKED_BY_POLICY, MIXED_CONTENT). It refuses nothing.
 *
 * Pure and synchronous, and bounded: linear in the facts, which are bounded per file. The publish
 * pipeline runs it in a worker thread (publishing/content-scans.pool.ts). Warnings come in bundle
 * order, by line within a file; at most WARNING_LIMIT are listed (the first of every code, then
 * the earliest others), then MORE_WARNINGS says how many more there are.
 */
import type { Warning } from '../core/schemas.ts'
import type { Finding } from '../publishing/bundle-paths.ts'
import { REDIRECTS_FILE } from '../publishing/redirect-rules.ts'
import type { FileFacts, PageFacts, Reference, ReferenceKind } from './file-facts.ts'
import { MAX_REFERENCES } from './file-facts.ts'
import { type Loaded, oversizedImages, pageTooHeavy, type ShownFile } from './page-weight.ts'
import { baseAddress, resolveAddress, SitePaths } from './site-paths.ts'
import { unusedFiles } from './unused-files.ts'

/** Warnings listed at most for a version (every code at least once). */
export const WARNING_LIMIT = 200

export interface SiteCheckFile {
  path: string
  size: number
  contentType: string
}

export interface SiteCheckInput {
  /** Every file of the bundle, in bundle order. */
  files: SiteCheckFile[]
  /** The facts of each file the rules read. */
  facts: Array<{ path: string; facts: FileFacts }>
  /** What the rules warned of (BLOCKED_BY_POLICY, MIXED_CONTENT), each with its file and line. */
  ruleWarnings: Finding[]
  /** The site's collections: the paths they serve are answered. */
  collectionNames: readonly string[]
  /** The pixel sizes of images pages show at a stated size (imagesToMeasure). */
  pixels: Array<{ path: string; width: number; height: number }>
}

/** Templates render entry pages at the site root: their addresses resolve from there, and only rendering fills most of them. */
const TEMPLATES = '_templates/'
const HTML = 'text/html'
const MEASURED_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])
/** Files whose ids a fragment names (a stylesheet's `url(#filter)` names the page's). */
const MARKUP = new Set([HTML, 'image/svg+xml', 'application/xhtml+xml'])

const VERBS: Record<ReferenceKind, string> = {
  link: 'links to',
  image: 'shows the image',
  candidate: 'offers the image',
  stylesheet: 'loads the stylesheet',
  script: 'loads the script',
  resource: 'loads',
  media: 'plays',
}

export function checkSite(input: SiteCheckInput, limit = WARNING_LIMIT): Warning[] {
  const paths = input.files.map((file) => file.path)
  const sizes = new Map(input.files.map((file) => [file.path, file.size]))
  const types = new Map(input.files.map((file) => [file.path, file.contentType]))
  const factsOf = new Map(input.facts.map(({ path, facts }) => [path, facts]))
  const site = new SitePaths(paths, factsOf.get(REDIRECTS_FILE)?.redirects ?? null, input.collectionNames)
  const byFile = new Map<string, Warning[]>()
  const warn = (warning: Warning) => {
    const list = byFile.get(warning.path)
    if (list) list.push(warning)
    else byFile.set(warning.path, [warning])
  }
  for (const finding of input.ruleWarnings) warn(asWarning(finding))

  // The ids of a file each fragment is looked up in, made once per file: null when not all are known.
  const anchorSets = new Map<string, ReadonlySet<string> | null>()
  const anchorsOf = (file: string): ReadonlySet<string> | null => {
    let found = anchorSets.get(file)
    if (found === undefined) {
      const facts = factsOf.get(file)
      anchorSets.set(file, (found = facts === undefined || !facts.anchorsComplete ? null : new Set(facts.anchors)))
    }
    return found
  }
  const used = new Set<string>()
  const loads = new Map<string, Loaded[]>()
  const shown = new Map<string, ShownFile[]>()
  let complete = true
  for (const { path, facts } of input.facts) {
    const template = path.startsWith(TEMPLATES)
    const base = baseAddress(template ? 'index.html' : path, facts.page?.base ?? null)
    const own: Loaded[] = []
    for (const ref of facts.refs) {
      const to = resolveAddress(ref.url, base)
      if (to === 'elsewhere') continue
      const answer = to === 'invalid' ? null : site.answer(to.pathname)
      if (answer === null) {
        if (!template) warn(brokenLink(path, ref))
        continue
      }
      if (answer === 'answered' || to === 'invalid') continue
      if (answer.file !== path) used.add(answer.file)
      own.push({ file: answer.file, kind: ref.kind })
      if (template || to.fragment === null || (ref.kind !== 'link' && ref.kind !== 'resource') || !MARKUP.has(types.get(answer.file) ?? '')) continue
      const missing = missingAnchor(path, ref, answer.file, to.fragment, anchorsOf(answer.file))
      if (missing !== null) warn(missing)
    }
    loads.set(path, own)
    if (facts.refsDropped > 0) {
      complete = false
      warn(checkIncomplete(path, facts.refsDropped))
    }
    if (facts.page === null || template || types.get(path) !== HTML) continue
    pageWarnings(path, facts.page).forEach(warn)
    shown.set(path, resolveShown(facts.page.shown, base, site, types))
  }

  const pixels = new Map(input.pixels.map(({ path, width, height }) => [path, { width, height }]))
  for (const [page, images] of shown) {
    const heavy = pageTooHeavy(page, loads, sizes)
    if (heavy !== null) warn(heavy)
    oversizedImages(page, images, pixels, sizes).forEach(warn)
  }
  if (complete) unusedFiles(paths, used, mentionsOf(input.facts)).forEach(warn)
  return capped(paths, byFile, limit)
}

/**
 * The bundle paths of the images pages show at a stated width or height (in pixels), which
 * IMAGE_OVERSIZED needs the pixel sizes of: PNG, JPEG, GIF and WebP files.
 */
export function imagesToMeasure(input: Pick<SiteCheckInput, 'files' | 'facts' | 'collectionNames'>): string[] {
  const types = new Map(input.files.map((file) => [file.path, file.contentType]))
  const redirects = input.facts.find((f) => f.path === REDIRECTS_FILE)?.facts.redirects ?? null
  const site = new SitePaths(types.keys(), redirects, input.collectionNames)
  const wanted = new Set<string>()
  for (const { path, facts } of input.facts) {
    if (facts.page === null || path.startsWith(TEMPLATES) || types.get(path) !== HTML) continue
    const sized = facts.page.shown.filter((img) => img.width !== null || img.height !== null)
    for (const img of resolveShown(sized, baseAddress(path, facts.page.base), site, types)) wanted.add(img.file)
  }
  return [...wanted]
}

/** The <img> elements of a page that show a PNG, JPEG, GIF or WebP file of the bundle, with that file. */
function resolveShown(shown: PageFacts['shown'], base: URL, site: SitePaths, types: ReadonlyMap<string, string>): ShownFile[] {
  return shown.flatMap((img) => {
    const to = resolveAddress(img.url, base)
    const answer = typeof to === 'string' ? null : site.answer(to.pathname)
    if (answer === null || answer === 'answered' || !MEASURED_TYPES.has(types.get(answer.file) ?? '')) return []
    return [{ file: answer.file, line: img.line, width: img.width, height: img.height }]
  })
}

function brokenLink(path: string, ref: Reference): Warning {
  return {
    code: 'BROKEN_LINK',
    path,
    line: ref.line,
    message: `${path} ${VERBS[ref.kind]} ${JSON.stringify(ref.url)}, which is no file of the site, no content page and no _redirects rule: fix the address, add the file, or add a rule.`,
  }
}

/** Fragments that need no element: the top of the page, text fragments, and the routes of pages that route by their fragment. */
const NEEDS_NO_ELEMENT = /^(?:top|:~:.*|[/!].*)?$/is

function missingAnchor(path: string, ref: Reference, target: string, fragment: string, anchors: ReadonlySet<string> | null): Warning | null {
  if (anchors === null || NEEDS_NO_ELEMENT.test(fragment)) return null
  let decoded = fragment
  try {
    decoded = decodeURIComponent(fragment)
  } catch {
    // Browsers look the fragment up as written too.
  }
  if (anchors.has(fragment) || anchors.has(decoded)) return null
  const where = target === path ? 'the page' : target
  return {
    code: 'MISSING_ANCHOR',
    path,
    line: ref.line,
    message: `${path} links to ${JSON.stringify(ref.url)}, but ${where} has no element with id=${JSON.stringify(decoded)}: add that id, or link to one ${where} has.`,
  }
}

function pageWarnings(path: string, page: PageFacts): Warning[] {
  const found: Warning[] = []
  if (!page.hasTitle)
    found.push({
      code: 'MISSING_TITLE',
      path,
      message: `${path} has no <title>: add one to <head>; browsers show it on the tab and search engines as the link.`,
    })
  if (!page.hasLang)
    found.push({ code: 'MISSING_LANG', path, message: `${path} does not say its language: add it to the <html> element, e.g. <html lang="en">.` })
  if (!page.hasViewport) {
    found.push({
      code: 'MISSING_VIEWPORT',
      path,
      message: `${path} has no viewport meta tag, so phones show it zoomed out: add <meta name="viewport" content="width=device-width, initial-scale=1"> to <head>.`,
    })
  }
  for (const img of page.missingAlt) {
    const what = img.src === '' ? 'an image' : JSON.stringify(img.src)
    found.push({
      code: 'MISSING_ALT',
      path,
      line: img.line,
      message: `${path} shows ${what} without alt text: add alt="what it shows" (alt="" for a decorative image).`,
    })
  }
  for (const dup of page.duplicateIds) {
    found.push({
      code: 'DUPLICATE_ID',
      path,
      line: dup.line,
      message: `${path} has id=${JSON.stringify(dup.id)} again (first on line ${dup.first}): give each element its own id; links and scripts find only the first.`,
    })
  }
  return found
}

function checkIncomplete(path: string, dropped: number): Warning {
  return {
    code: 'CHECK_INCOMPLETE',
    path,
    message: `${path} names more than ${MAX_REFERENCES} distinct addresses: the ${dropped} beyond were not checked, nor were unused files for this version; split the file to have them checked.`,
  }
}

/** A rule's warning as a publish reports it: code, file, line and message. */
export function asWarning({ code, path, line, message }: Finding): Warning {
  return { code, path: path ?? '', ...(line === undefined ? {} : { line }), message }
}

function* mentionsOf(facts: SiteCheckInput['facts']): Iterable<string> {
  for (const file of facts) yield* file.facts.mentions
}

/**
 * The warnings in bundle order (by line within a file), at most `limit`: the first of every code,
 * then the earliest others; MORE_WARNINGS counts what is left out.
 */
function capped(paths: readonly string[], byFile: ReadonlyMap<string, Warning[]>, limit: number): Warning[] {
  const ordered = [...paths, ''].flatMap((path) => [...(byFile.get(path) ?? [])].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)))
  if (ordered.length <= limit) return ordered
  const keep = new Set<number>()
  const codes = new Set<string>()
  ordered.forEach((w, i) => {
    if (codes.has(w.code)) return
    codes.add(w.code)
    keep.add(i)
  })
  for (let i = 0; i < ordered.length && keep.size < limit; i++) keep.add(i)
  const kept = ordered.filter((_, i) => keep.has(i))
  const more = ordered.length - kept.length
  kept.push({
    code: 'MORE_WARNINGS',
    path: '',
    message: `${more} more warning${more === 1 ? ' is' : 's are'} not listed (at most ${limit} are, every code at least once): fix these and publish again to see the rest.`,
  })
  return kept
}
