/**
 * Rich text of entries: `{html}` or `{markdown}` from an untrusted client, turned into HTML that
 * is safe to put on a page. Markdown is rendered by markdown-it with raw HTML escaped; then all of
 * it goes through DOMPurify (on one jsdom window per process) with an allowlist made for article
 * content. What survives: text structure, links to http(s)/mailto/relative targets, images from
 * http(s)/relative/inline raster data and upload references (image-references.ts). What never does: scripts, event handlers, styles (they can
 * load remote resources), frames, forms, SVG and MathML, and any other URL scheme.
 */
import { createRequire } from 'node:module'
import createDOMPurify, { type Config as PurifyConfig } from 'dompurify'
import MarkdownIt from 'markdown-it'
import { parseFragment } from 'parse5'
import { AppError } from '../core/errors.ts'
import { RICH_TEXT_MAX_CHARS } from '../core/limits.ts'
import { ACCEPTED_IMAGE_MEDIA_TYPES } from '../images/image-type.ts'
import { UPLOAD_SCHEME } from './image-references.ts'

export type RichTextValue = { html: string } | { markdown: string }

export interface RenderedRichText {
  /** Sanitized HTML: what pages show. */
  html: string
  /** The src of every image left after sanitizing, in order, without repeats. */
  images: string[]
}

/**
 * Deepest element nesting accepted. Articles nest a dozen levels; jsdom walks trees recursively
 * (a few thousand levels overflow the stack) and DOMPurify's cost grows with depth times size.
 */
export const RICH_TEXT_MAX_DEPTH = 256
/** Most attributes on one element: DOMPurify's cost grows with their square. */
const RICH_TEXT_MAX_ATTRIBUTES = 100

const ALLOWED_TAGS = [
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'p',
  'br',
  'hr',
  'div',
  'span',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'a',
  'em',
  'strong',
  'b',
  'i',
  'u',
  's',
  'del',
  'ins',
  'sub',
  'sup',
  'mark',
  'small',
  'abbr',
  'q',
  'cite',
  'dfn',
  'time',
  'code',
  'pre',
  'kbd',
  'samp',
  'var',
  'blockquote',
  'table',
  'caption',
  'colgroup',
  'col',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'figure',
  'figcaption',
  'img',
]
const ALLOWED_ATTR = [
  'href',
  'title',
  'src',
  'alt',
  'width',
  'height',
  'loading',
  'colspan',
  'rowspan',
  'scope',
  'headers',
  'span',
  'start',
  'reversed',
  'datetime',
  'lang',
  'dir',
  'class',
]

const PURIFY_CONFIG: PurifyConfig = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  // URLs DOMPurify lets through to checkLinksAndImages, which decides: the schemes it may keep
  // (upload: for images, until they are put in the library) and relative URLs.
  ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto|upload):|[^a-z]|[a-z+.-]+(?:[^a-z+.:-]|$))/i,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  KEEP_CONTENT: true,
  WHOLE_DOCUMENT: false,
}

const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:'])
const IMAGE_SCHEMES = new Set(['http:', 'https:'])
/** Inline images of the types the image library keeps: `data:image/png;base64,...` */
const RASTER_DATA_URL = new RegExp(`^data:(${ACCEPTED_IMAGE_MEDIA_TYPES.map((t) => t.replace('/', '\\/')).join('|')});base64,[a-z0-9+/=\\s]*$`, 'i')
/** Stands in for "this page" when telling relative URLs from absolute ones. */
const RELATIVE_BASE = 'https://relative.invalid/'
const RELATIVE_ORIGIN = new URL(RELATIVE_BASE).origin

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number]

const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false })

type Purifier = ReturnType<typeof createDOMPurify>

/**
 * One jsdom window and one purifier for the whole process, made on first use: loading jsdom and
 * building a window are costly, and a process that never renders rich text (the admin CLI, a
 * server that only serves) does not pay for them at start.
 */
let sanitizer: { purifier: Purifier; resetListeners: () => void } | null = null

function sanitizerInstance(): { purifier: Purifier; resetListeners: () => void } {
  if (sanitizer) return sanitizer
  const { JSDOM } = createRequire(import.meta.url)('jsdom') as typeof import('jsdom')
  const window = new JSDOM('').window
  const purifier = createDOMPurify(window)
  purifier.setConfig(PURIFY_CONFIG)
  purifier.addHook('afterSanitizeAttributes', checkLinksAndImages)
  sanitizer = { purifier, resetListeners: listenerReset(window) }
  return sanitizer
}

/**
 * jsdom 27 registers listeners on the window for every Document it creates (its selector engine
 * does, and DOMPurify parses each call into a new Document) and never removes them: the list would
 * grow with every call, making each call slower and keeping every document alive. After each call
 * the window's listener lists are cut back to what they held before the first one. (Documents are
 * also held until the current job ends, through the WeakRef jsdom keeps of each NodeIterator: a
 * caller rendering thousands of values in one synchronous loop should yield now and then.)
 */
function listenerReset(window: object): () => void {
  const impl = Object.getOwnPropertySymbols(window).find((s) => s.description === 'impl')
  const lists = impl ? ((window as Record<symbol, { _eventListeners?: Record<string, unknown[]> } | undefined>)[impl]?._eventListeners ?? null) : null
  const baseline = new Map(Object.entries(lists ?? {}).map(([type, list]) => [type, list.length]))
  return () => {
    for (const [type, list] of Object.entries(lists ?? {})) list.length = baseline.get(type) ?? 0
  }
}

/**
 * State of the sanitize call in progress. DOMPurify runs synchronously and hooks are global to
 * the purifier, so one slot per process is enough and never shared between two calls.
 */
let pass: { images: Set<string>; rewrite: ((src: string) => string) | null } = { images: new Set(), rewrite: null }

/** Keeps links to http(s), mailto and relative targets and safe image sources; records the images. */
function checkLinksAndImages(node: Node): void {
  const element = node as Element
  if (element.tagName === 'A') {
    const href = element.getAttribute('href')
    if (href === null) return
    const policy = linkPolicy(href)
    if (policy === 'drop') element.removeAttribute('href')
    else if (policy === 'external') element.setAttribute('rel', EXTERNAL_REL)
  } else if (element.tagName === 'IMG') {
    const original = element.getAttribute('src')
    const src = original !== null && pass.rewrite ? pass.rewrite(original) : original
    // An upload reference stands until the entry's images are put in the library; none may stay.
    if (src === null || !isSafeImageSource(src, pass.rewrite === null)) {
      // An image without a source shows nothing but its broken-image box.
      element.remove()
      return
    }
    if (src !== original) element.setAttribute('src', src)
    pass.images.add(src)
  }
}

const EXTERNAL_REL = 'noopener nofollow'

/** What becomes of a link: its href dropped (a scheme links may not use), kept with EXTERNAL_REL (another site), or kept. */
function linkPolicy(href: string): 'drop' | 'external' | 'local' {
  const url = parseUrl(href)
  if (!url || !LINK_SCHEMES.has(url.protocol)) return 'drop'
  return url.origin !== RELATIVE_ORIGIN && url.protocol !== 'mailto:' ? 'external' : 'local'
}

function parseUrl(value: string): URL | null {
  try {
    // The URL parser strips what browsers strip (tabs, newlines, leading controls), so
    // `java\tscript:` is read as the javascript: URL it would be in a browser.
    return new URL(value, RELATIVE_BASE)
  } catch {
    return null
  }
}

function isSafeImageSource(src: string, uploads: boolean): boolean {
  if (/^\s*data:/i.test(src)) return RASTER_DATA_URL.test(src.trim())
  if (UPLOAD_SCHEME.test(src)) return uploads
  const url = parseUrl(src)
  return url !== null && IMAGE_SCHEMES.has(url.protocol)
}

/**
 * Why the markup's shape would make sanitizing it a denial of service, or null. Parsed as a
 * browser would by parse5, which builds trees without recursion, and walked without recursion.
 */
function shapeProblem(html: string): string | null {
  type Node = { childNodes?: Node[]; content?: Node; attrs?: unknown[] }
  const stack: Array<[Node, number]> = [[parseFragment(html) as Node, 0]]
  let deepest = 0
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item
    if (depth > deepest) deepest = depth
    const attributes = node.attrs?.length ?? 0
    if (attributes > RICH_TEXT_MAX_ATTRIBUTES) return `has an element with ${attributes} attributes; at most ${RICH_TEXT_MAX_ATTRIBUTES} are accepted`
    for (const child of node.childNodes ?? []) stack.push([child, depth + 1])
    if (node.content) stack.push([node.content, depth + 1])
  }
  return deepest > RICH_TEXT_MAX_DEPTH ? `nests elements ${deepest} levels deep; at most ${RICH_TEXT_MAX_DEPTH} are accepted` : null
}

function sanitize(html: string, rewrite: ((src: string) => string) | null): RenderedRichText {
  const problem = shapeProblem(html)
  if (problem) throw new AppError('VALIDATION_FAILED', `Rich text ${problem}.`)
  const { purifier, resetListeners } = sanitizerInstance()
  pass = { images: new Set(), rewrite }
  try {
    const clean = purifier.sanitize(html)
    return { html: clean, images: [...pass.images] }
  } finally {
    resetListeners()
    pass = { images: new Set(), rewrite: null }
  }
}

/**
 * Markdown without the DOM sanitizer. With `html: false` markdown-it emits no markup of the
 * author's: every tag comes from its own renderer, every text and attribute value is escaped. What
 * is left to enforce is the policy on the attributes it sets, applied here to its tokens with the
 * same rules as the sanitizer hook: only allowlisted attributes (table cells lose their `style`),
 * links to http(s)/mailto/relative targets (rel added on external ones), safe image sources (an
 * unsafe image is dropped whole), so markdown never pays for a jsdom pass.
 */
function renderMarkdown(source: string): RenderedRichText {
  const env = {}
  const tokens = markdown.parse(source, env)
  const images = new Set<string>()
  const allowed = new Set(ALLOWED_ATTR)
  const visit = (list: Token[]) => {
    for (const token of list) {
      if (token.attrs) token.attrs = token.attrs.filter(([name]) => allowed.has(name))
      if (token.type === 'link_open') {
        const href = token.attrGet('href')
        if (href === null) continue
        const policy = linkPolicy(String(href))
        if (policy === 'drop') token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'href')
        else if (policy === 'external') token.attrSet('rel', EXTERNAL_REL)
      } else if (token.type === 'image') {
        const attr = token.attrGet('src')
        const src = attr === null ? null : String(attr)
        if (src === null || !isSafeImageSource(src, true)) {
          // As the sanitizer does: an image without a usable source is removed, alt text and all.
          token.type = 'text'
          token.content = ''
          token.children = null
          continue
        }
        images.add(src)
      }
      if (token.children) visit(token.children)
    }
  }
  visit(tokens)
  return { html: markdown.renderer.render(tokens, markdown.options, env), images: [...images] }
}

/** Sanitized HTML of a rich-text value, and the images it shows. */
export function renderRichText(value: RichTextValue): RenderedRichText {
  const source = 'markdown' in value ? value.markdown : value.html
  if (typeof source !== 'string') throw new AppError('VALIDATION_FAILED', 'Rich text must be {"html": string} or {"markdown": string}.')
  if (source.length > RICH_TEXT_MAX_CHARS) {
    throw new AppError('VALIDATION_FAILED', `Rich text is ${source.length} characters long; at most ${RICH_TEXT_MAX_CHARS} are accepted.`)
  }
  return 'markdown' in value ? renderMarkdown(source) : sanitize(source, null)
}

/**
 * Replaces the src of every image in sanitized HTML (with the library copy, typically). The
 * result is sanitized again in the same pass, so a replacement can never smuggle in a bad URL.
 */
export function rewriteImageSources(html: string, replace: (src: string) => string): string {
  return sanitize(html, replace).html
}
