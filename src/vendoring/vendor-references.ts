/**
 * Where a page or a stylesheet names a file on another host, and how to name a copy instead.
 *
 * HTML is parsed with parse5 (as browsers parse it) with source locations, so a rewrite changes
 * only the attributes and stylesheet text it must and leaves every other byte of the page as it
 * was. Found: `<script src>`, `<link href>` whose rel is stylesheet, icon (and apple-touch-icon),
 * preload or modulepreload, `<img src|srcset>`, `<source srcset>`, and in CSS (`<style>`
 * elements, `style` attributes, stylesheets) every `url()` and `@import`, read with css-tree's
 * tokenizer. Only http(s) URLs and protocol-relative ones (`//host/...`, read as https) are
 * external; `data:` and every relative URL are left alone.
 */
import parseSrcset from '@fisker/parse-srcset'
import { tokenize, tokenTypes } from 'css-tree/tokenizer'
import { ident, string as cssString, url as cssUrl } from 'css-tree/utils'
import { type DefaultTreeAdapterTypes as T, parse } from 'parse5'
import { escapeHtml } from '../core/html.ts'

/** What a reference loads, which decides the type its copy is stored as. */
export type ReferenceKind = 'script' | 'style' | 'font' | 'image' | 'asset'

/** An external URL named in a file: the absolute URL it resolves to, and what it loads. */
export interface ExternalReference {
  url: string
  kind: ReferenceKind
  /** The element's `integrity` attribute, when it has one (scripts, stylesheets, preloads). */
  integrity?: string
}

/** A change to a text: the characters from start to end replaced by `text`. */
export interface TextEdit {
  start: number
  end: number
  text: string
}

/** One occurrence of an external reference, with the edits that point it at a copy. */
interface Occurrence extends ExternalReference {
  /** The edits, given the new reference of each URL it names (undefined: left as it is). */
  rewrite: (copyOf: (url: string) => string | undefined, keepIntegrity: (url: string) => boolean) => TextEdit[]
}

/** The absolute http(s) URL an external reference names, or null when it is not one (relative, data:, ...). */
export function externalUrl(raw: string, base?: string): string | null {
  const trimmed = raw.trim().replace(/[\t\n\r]/g, '')
  if (trimmed === '') return null
  const protocolRelative = /^[/\\]{2}/.test(trimmed)
  if (base === undefined && !protocolRelative && !/^https?:/i.test(trimmed)) return null
  let url: URL
  try {
    url = new URL(trimmed, protocolRelative && base === undefined ? 'https://invalid/' : base)
  } catch {
    return null
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
  // A fragment names a part of the file, not another file.
  url.hash = ''
  return url.href
}

// ---------------------------------------------------------------------------------------------
// CSS

interface CssUrl {
  raw: string
  start: number
  end: number
  /** Whether the token was a bare `url(...)` (rewritten whole) or a string (rewritten as a string). */
  form: 'url' | 'string'
  isImport: boolean
}

/** Every `url()` and `@import` target of a stylesheet, with where it is written. */
function cssUrls(css: string): CssUrl[] {
  const found: CssUrl[] = []
  // Whether the previous token was `@import`, and whether it was `url(` (and came after `@import`).
  let afterImport = false
  let urlFunction: { isImport: boolean } | null = null
  tokenize(css, (type, start, end) => {
    if (type === tokenTypes.WhiteSpace || type === tokenTypes.Comment) return
    const text = css.slice(start, end)
    if (urlFunction && type === tokenTypes.String) {
      found.push({ raw: cssString.decode(text), start, end, form: 'string', isImport: urlFunction.isImport })
    } else if (type === tokenTypes.Url) {
      found.push({ raw: cssUrl.decode(text), start, end, form: 'url', isImport: afterImport })
    } else if (afterImport && type === tokenTypes.String) {
      found.push({ raw: cssString.decode(text), start, end, form: 'string', isImport: true })
    }
    const opensUrl = type === tokenTypes.Function && ident.decode(text.slice(0, -1)).toLowerCase() === 'url'
    urlFunction = opensUrl ? { isImport: afterImport } : null
    afterImport = type === tokenTypes.AtKeyword && ident.decode(text.slice(1)).toLowerCase() === 'import'
  })
  return found
}

/** The external references of a stylesheet, resolved against `base` (the URL it was fetched from; none for a bundle file). */
export function cssReferences(css: string, base?: string): ExternalReference[] {
  return cssOccurrences(css, 0, base).map(({ url, kind }) => ({ url, kind }))
}

function cssOccurrences(css: string, offset: number, base?: string): Occurrence[] {
  return cssUrls(css).flatMap((found): Occurrence[] => {
    const url = externalUrl(found.raw, base)
    if (url === null) return []
    return [
      {
        url,
        kind: found.isImport ? 'style' : 'asset',
        rewrite: (copyOf) => {
          const copy = copyOf(url)
          if (copy === undefined) return []
          // Copies are named with characters no CSS string needs to escape (vendor-paths.ts).
          const text = found.form === 'url' ? `url("${copy}")` : `"${copy}"`
          return [{ start: offset + found.start, end: offset + found.end, text }]
        },
      },
    ]
  })
}

/** The stylesheet with each external URL that has a copy named by the copy instead. */
export function rewriteCss(css: string, copyOf: (url: string) => string | undefined, base?: string): string {
  return applyEdits(
    css,
    cssOccurrences(css, 0, base).flatMap((o) => o.rewrite(copyOf, () => true)),
  )
}

// ---------------------------------------------------------------------------------------------
// HTML

type Element = T.Element
type Location = { startOffset: number; endOffset: number }

const ICON_RELS = new Set(['icon', 'shortcut', 'apple-touch-icon', 'apple-touch-icon-precomposed', 'mask-icon'])
const PRELOAD_KINDS: Record<string, ReferenceKind> = { script: 'script', style: 'style', font: 'font', image: 'image' }

/** The external references of a page, in document order. */
export function htmlReferences(html: string): ExternalReference[] {
  return htmlOccurrences(html).map(({ url, kind, integrity }) => ({ url, kind, ...(integrity !== undefined && { integrity }) }))
}

/**
 * The page with each external URL that has a copy named by the copy instead. `keepIntegrity`
 * says whether an element's `integrity` stays (its copy holds the very bytes fetched) or goes
 * (the copy was changed, so the hash no longer describes it); `crossorigin` goes from every
 * element whose file becomes the site's own, except a font preload, which a browser matches to
 * the font's own (always CORS) request only with it.
 */
export function rewriteHtml(html: string, copyOf: (url: string) => string | undefined, keepIntegrity: (url: string) => boolean): string {
  return applyEdits(
    html,
    htmlOccurrences(html).flatMap((o) => o.rewrite(copyOf, keepIntegrity)),
  )
}

function htmlOccurrences(html: string): Occurrence[] {
  const found: Occurrence[] = []
  const visit = (node: T.ParentNode) => {
    for (const child of node.childNodes) {
      if (!('tagName' in child)) continue
      found.push(...elementOccurrences(child, html))
      visit(child)
      if (child.tagName === 'template') visit((child as T.Template).content)
    }
  }
  visit(parse(html, { sourceCodeLocationInfo: true }))
  return found
}

const attr = (el: Element, name: string): string | undefined => el.attrs.find((a) => a.name === name && !a.prefix)?.value
const attrLocation = (el: Element, name: string): Location | undefined => el.sourceCodeLocation?.attrs?.[name]

function elementOccurrences(el: Element, html: string): Occurrence[] {
  const tag = el.tagName
  if (tag === 'style') return styleElementOccurrences(el)
  const found: Occurrence[] = []
  const style = attr(el, 'style')
  if (style !== undefined && /url\(|@import/i.test(style)) found.push(...styleAttributeOccurrences(el, style))
  const single = (name: string, kind: ReferenceKind, options: { keepsCrossorigin?: boolean } = {}) => {
    const raw = attr(el, name)
    const url = raw === undefined ? null : externalUrl(raw)
    if (url === null) return
    const integrity = attr(el, 'integrity')
    found.push({
      url,
      kind,
      ...(integrity !== undefined && { integrity }),
      rewrite: (copyOf, keepIntegrity) => {
        const copy = copyOf(url)
        if (copy === undefined) return []
        const edits = [setAttribute(el, name, copy)]
        if (integrity !== undefined && !keepIntegrity(url)) edits.push(...removeAttribute(el, 'integrity', html))
        if (!options.keepsCrossorigin) edits.push(...removeAttribute(el, 'crossorigin', html))
        return edits
      },
    })
  }
  if (tag === 'script') single('src', 'script')
  else if (tag === 'link') {
    const rels = (attr(el, 'rel') ?? '').toLowerCase().split(/\s+/).filter(Boolean)
    const as = (attr(el, 'as') ?? '').toLowerCase()
    if (rels.includes('stylesheet')) single('href', 'style')
    else if (rels.includes('modulepreload')) single('href', 'script')
    else if (rels.includes('preload') && PRELOAD_KINDS[as]) single('href', PRELOAD_KINDS[as], { keepsCrossorigin: as === 'font' })
    else if (rels.some((rel) => ICON_RELS.has(rel))) single('href', 'image')
  } else if (tag === 'img' || tag === 'source') {
    if (tag === 'img') single('src', 'image')
    const srcset = attr(el, 'srcset')
    if (srcset !== undefined) found.push(...srcsetOccurrences(el, srcset))
  }
  return found
}

function srcsetOccurrences(el: Element, srcset: string): Occurrence[] {
  const candidates = parseSrcset(srcset, { logger: { error: () => {} } })
  const urls = candidates.map((c) => externalUrl(c.url))
  if (urls.every((url) => url === null)) return []
  return urls.flatMap((url, i): Occurrence[] => {
    if (url === null) return []
    return [
      {
        url,
        kind: 'image',
        // The first external candidate rewrites the whole attribute, for every candidate at once.
        rewrite: (copyOf) => {
          if (i !== urls.findIndex((u) => u !== null)) return []
          const value = candidates
            .map((c, k) => {
              const copy = urls[k] === null ? undefined : copyOf(urls[k]!)
              const descriptor = c.w !== undefined ? ` ${c.w}w` : c.d !== undefined ? ` ${c.d}x` : c.h !== undefined ? ` ${c.h}h` : ''
              return `${copy ?? c.url}${descriptor}`
            })
            .join(', ')
          return [setAttribute(el, 'srcset', value)]
        },
      },
    ]
  })
}

function styleElementOccurrences(el: Element): Occurrence[] {
  return el.childNodes.flatMap((child): Occurrence[] => {
    if (child.nodeName !== '#text' || !child.sourceCodeLocation) return []
    const text = (child as T.TextNode).value
    return cssOccurrences(text, child.sourceCodeLocation.startOffset).map((o) => ({ ...o, kind: o.kind }))
  })
}

function styleAttributeOccurrences(el: Element, style: string): Occurrence[] {
  return cssOccurrences(style, 0).map((o, i, all) => ({
    url: o.url,
    kind: o.kind,
    // The attribute is written anew once, with every URL of it rewritten.
    rewrite: (copyOf) => (i === 0 && all.length > 0 ? [setAttribute(el, 'style', rewriteCss(style, copyOf))] : []),
  }))
}

/** The edit that writes the attribute anew with this value, quoted. */
function setAttribute(el: Element, name: string, value: string): TextEdit {
  const location = attrLocation(el, name)!
  return { start: location.startOffset, end: location.endOffset, text: `${name}="${escapeHtml(value)}"` }
}

/** The edit that removes the attribute and the white space before it; none when it is absent. */
function removeAttribute(el: Element, name: string, html: string): TextEdit[] {
  const location = attrLocation(el, name)
  if (!location) return []
  let start = location.startOffset
  while (start > 0 && /\s/.test(html[start - 1]!)) start--
  return [{ start, end: location.endOffset, text: '' }]
}

/** The text with the edits made; edits never overlap (each touches its own attribute or token). */
export function applyEdits(text: string, edits: TextEdit[]): string {
  if (edits.length === 0) return text
  const sorted = [...edits].sort((a, b) => a.start - b.start)
  let out = ''
  let at = 0
  for (const edit of sorted) {
    out += text.slice(at, edit.start) + edit.text
    at = edit.end
  }
  return out + text.slice(at)
}
