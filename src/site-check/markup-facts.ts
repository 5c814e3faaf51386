/**
 * The facts of one element of a page or an SVG file, taken as the HTML parser creates it
 * (publishing/html-rules.ts): the addresses its attributes name and how the page uses them, its
 * id, and for a page the title, language, viewport, image and `<base>` facts. Ids inside a
 * <template> are not the document's, so they are not counted; what a template's elements load or
 * link still is.
 */
import parseSrcset from '@fisker/parse-srcset'
import { isExternalUrl } from '../publishing/bundle-paths.ts'
import { cssReferences } from '../publishing/css-rules.ts'
import { type FactsCollector, MAX_PAGE_ITEMS, type ReferenceKind } from './file-facts.ts'

export interface NotedElement {
  /** The tag name, namespace prefix stripped. */
  tag: string
  attrs: ReadonlyArray<{ name: string; value: string }>
  line: number
  /** Inside a <template>'s content: not part of the document until a script puts it there. */
  inTemplate: boolean
}

/** A value that names a file of the site: plain path segments ending in an extension. */
const PATH_LIKE = /^(?:\.{1,2}\/|\/)*[\w@~-][\w@~.-]*(?:\/[\w@~.-]+)*\.[A-Za-z0-9]{1,8}$/
/** Attributes whose values are never addresses, so are never mentions either. */
const NOT_ADDRESSES = new Set(['class', 'alt', 'title', 'type', 'rel', 'as', 'lang', 'width', 'height', 'content', 'name', 'id', 'style', 'value'])
/** <link rel> values whose target the page loads. */
const LOADED_RELS = new Set(['icon', 'apple-touch-icon', 'apple-touch-icon-precomposed', 'mask-icon', 'manifest', 'preload'])
/** A refresh's target: `5; url=next.html`. */
const REFRESH_URL = /^\s*\d*(?:\.\d*)?\s*[;,]?\s*(?:url\s*=\s*)?['"]?([^'"]*)['"]?\s*$/i
/** A pixel count, as width and height attributes give one. */
const PIXELS = /^\s*(\d{1,6})(?:\.\d+)?\s*(?:px)?\s*$/

/** Notes what `el` says of the file; `page`: the file is an HTML document (not SVG, XHTML or a fragment). */
export function noteElement(facts: FactsCollector, el: NotedElement, page: boolean): void {
  const { tag, attrs, line } = el
  if (attrs.length === 0) {
    if (tag === 'img' && page) noteMissingAlt(facts, '', line)
    return
  }
  const at: Record<string, string> = {}
  for (const { name, value } of attrs) {
    if (!(name in at)) at[name] = value
    if (name === 'style' && value.includes('(')) {
      for (const found of cssReferences(value)) if (found.kind === 'url') facts.reference(found.url, 'resource', line)
    } else if (!NOT_ADDRESSES.has(name) && !isAddressAttribute(tag, name) && PATH_LIKE.test(value)) facts.mention(value)
  }
  const ref = (url: string | undefined, kind: ReferenceKind) => url !== undefined && facts.reference(url, kind, line)
  if (at.id !== undefined && !el.inTemplate) facts.anchor(at.id, line, true)
  switch (tag) {
    case 'a':
      if (at.name !== undefined && !el.inTemplate) facts.anchor(at.name, line, false)
      ref(at.href, 'link')
      return
    case 'area':
      ref(at.href, 'link')
      return
    case 'link':
      ref(at.href, linkKind(at.rel ?? '', at.as ?? ''))
      return
    case 'script':
      ref(at.src, 'script')
      return
    case 'img':
      noteImage(facts, at, line, page)
      return
    case 'source':
      srcset(facts, at.srcset, line, 'candidate')
      ref(at.src, 'media')
      return
    case 'video':
      ref(at.poster, 'image')
      ref(at.src, 'media')
      return
    case 'audio':
    case 'track':
      ref(at.src, 'media')
      return
    case 'input':
      if ((at.type ?? '').trim().toLowerCase() === 'image') ref(at.src, 'image')
      return
    case 'form':
      ref(at.action, 'link')
      return
    case 'image':
      ref(at.href, 'image')
      return
    case 'use':
      ref(at.href, 'resource')
      return
    case 'html':
      noteLang(facts, at)
      return
    case 'meta':
      noteMeta(facts, at, line)
      return
    case 'base':
      if (facts.page !== null && facts.page.base === null && at.href !== undefined && !isExternalUrl(at.href)) facts.page.base = at.href.trim()
  }
}

/** Attributes of `<html>` a later `<html>` tag adds (the parser merges them): its language. */
export function noteHtmlAttributes(facts: FactsCollector, attrs: ReadonlyArray<{ name: string; value: string }>): void {
  noteLang(facts, Object.fromEntries(attrs.map((a) => [a.name, a.value])))
}

/** The text of the document's <title>: a page has a title when it says something. */
export function noteTitle(facts: FactsCollector, text: string): void {
  if (facts.page !== null && text.trim() !== '') facts.page.hasTitle = true
}

function isAddressAttribute(tag: string, name: string): boolean {
  return name === 'href' || name === 'src' || name === 'srcset' || name === 'poster' || (tag === 'form' && name === 'action')
}

function linkKind(rel: string, as: string): ReferenceKind {
  const rels = rel.toLowerCase().split(/[\t\n\f\r ]+/)
  const type = as.trim().toLowerCase()
  if (rels.includes('stylesheet') || (rels.includes('preload') && type === 'style')) return 'stylesheet'
  if (rels.includes('modulepreload') || (rels.includes('preload') && type === 'script')) return 'script'
  return rels.some((r) => LOADED_RELS.has(r)) ? 'resource' : 'link'
}

function noteImage(facts: FactsCollector, at: Record<string, string>, line: number, page: boolean): void {
  const src = at.src?.trim()
  if (src !== undefined && src !== '') facts.reference(src, 'image', line)
  srcset(facts, at.srcset, line, src === undefined || src === '' ? 'image' : 'candidate')
  if (!page || facts.page === null) return
  if (at.alt === undefined) noteMissingAlt(facts, src ?? at.srcset ?? '', line)
  if (src !== undefined && src !== '' && at.srcset === undefined && facts.page.shown.length < MAX_PAGE_ITEMS) {
    facts.page.shown.push({ url: src, line, width: pixels(at.width), height: pixels(at.height) })
  }
}

/** A srcset's candidates: the first as `first`, the others as candidates. */
function srcset(facts: FactsCollector, value: string | undefined, line: number, first: ReferenceKind): void {
  if (value === undefined || value.trim() === '') return
  parseSrcset(value, { logger: { error: () => {} } }).forEach((candidate, i) => facts.reference(candidate.url, i === 0 ? first : 'candidate', line))
}

function noteMissingAlt(facts: FactsCollector, src: string, line: number): void {
  if (facts.page !== null && facts.page.missingAlt.length < MAX_PAGE_ITEMS) facts.page.missingAlt.push({ src, line })
}

function noteLang(facts: FactsCollector, at: Record<string, string>): void {
  const lang = at.lang ?? at['xml:lang']
  if (facts.page !== null && lang !== undefined && lang.trim() !== '') facts.page.hasLang = true
}

function noteMeta(facts: FactsCollector, at: Record<string, string>, line: number): void {
  if (facts.page !== null && (at.name ?? '').trim().toLowerCase() === 'viewport' && (at.content ?? '').trim() !== '') facts.page.hasViewport = true
  if ((at['http-equiv'] ?? '').trim().toLowerCase() !== 'refresh') return
  const target = REFRESH_URL.exec(at.content ?? '')?.[1]
  if (target !== undefined && target.trim() !== '') facts.reference(target, 'link', line)
}

function pixels(value: string | undefined): number | null {
  const match = value === undefined ? null : PIXELS.exec(value)
  return match === null ? null : Number(match[1])
}
