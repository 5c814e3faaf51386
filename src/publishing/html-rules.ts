/**
 * Authoring rules for markup: HTML pages, and SVG/XHTML files (which can also carry scripts and
 * frames). Files are parsed with parse5 exactly as a browser would (scripting enabled), through a
 * streaming tree adapter that checks every element the parser creates: that covers <template>
 * contents, SVG/MathML foreign content, elements moved around by error recovery, and attributes a
 * second <body>/<html> tag adds. <noscript> content is raw text when scripting is enabled, so it is
 * parsed again as a scripting-disabled fragment (what a browser with JavaScript off renders).
 *
 * - EXTERNAL_URL: <script src|href|xlink:href>, <link rel=stylesheet|modulepreload> and
 *   <link rel=preload as=script|style> with an external href, <base href> external, import maps
 *   mapping to external URLs, @import in <style>, and imports in inline scripts.
 * - IFRAME: <iframe>, <frame>, <frameset>, <object>, <embed>, <portal>, <fencedframe> in any
 *   namespace. (A <frame>/<frameset> the parser drops, e.g. inside <body>, is inert in browsers too.)
 *   An <object> or <embed> showing an SVG image is told to be an <img> instead.
 * - SERVICE_WORKER: <link rel=serviceworker>, and registrations in inline scripts, on* event-handler
 *   attributes and javascript: URLs.
 * - Warnings, which do not refuse the bundle but say what browsers will still block:
 *   MIXED_CONTENT, a subresource (src, srcset, poster, a <link> icon or preload) over plain http
 *   (it counts on an https site only); EXTERNAL_MANIFEST, a web app manifest from another origin
 *   (the Content-Security-Policy loads manifests from the site only); EXTERNAL_FORM_ACTION, a form
 *   sent to another origin (the policy's `form-action 'self'` stops browsers sending it).
 *
 * SVG and XHTML are really parsed as XML by browsers; the HTML parser is a close approximation for
 * ordinary files (XML namespace prefixes such as <svg:script> or xl:href are stripped before
 * matching), not an exact one.
 */

import { type DefaultTreeAdapterMap, defaultTreeAdapter, parse, parseFragment, type DefaultTreeAdapterTypes as T, type TreeAdapter } from 'parse5'
import type { PublishViolation } from '../core/errors.ts'
import { quoted } from '../core/text.ts'
import { type Emit, isExternalUrl, isPlainHttpUrl, snippet } from './bundle-paths.ts'
import { scanCss } from './css-rules.ts'
import { JS_CONTENT_TYPES, mayCompileStrings, scanJs } from './js-rules.ts'

const FRAME_ELEMENTS = new Set(['iframe', 'frame', 'frameset', 'object', 'embed', 'portal', 'fencedframe'])
const CHECKED_ELEMENTS = new Set([...FRAME_ELEMENTS, 'script', 'link', 'base'])
// Elements the parser may re-create from the same start tag (the "active formatting elements").
const FORMATTING_ELEMENTS = new Set(['a', 'b', 'big', 'code', 'em', 'font', 'i', 'nobr', 's', 'small', 'strike', 'strong', 'tt', 'u'])
// Data-block types that in-page transpilers (Babel standalone and friends) execute anyway.
const TRANSPILED_SCRIPT = /babel|jsx|typescript/

type ScriptKind = 'classic' | 'module' | 'importmap' | 'data'
type Attrs = Map<string, string>

/** An element as our tree adapter builds it: no child list, just what the rules need. */
interface LeanElement extends T.Element {
  /** Creation order = start-tag order; violations are sorted by it. */
  seq: number
  /** Name used for matching (namespace prefix stripped in XML mode). */
  tag: string
  /** Collected text content, for <script>, <style> and raw-text <noscript> only. */
  text: string | null
}

interface Found {
  seq: number
  violation: PublishViolation
}

const NO_CHILDREN = Object.freeze([]) as unknown as T.ChildNode[]

/** Checks one markup file. `xml` is true for SVG/XHTML files (prefixes are stripped from names). */
export function scanMarkup(text: string, path: string, xml: boolean, emit: Emit): void {
  const found = scanTree(text, path, xml, true)
  found.sort((a, b) => a.seq - b.seq) // stable: keeps the order within one element
  for (const f of found) emit(f.violation)
}

/**
 * Parses with parse5 through a streaming tree adapter: elements are checked as the parser creates
 * them (which covers <template> contents and foreign content), and element children are never
 * stored, so an 8 MiB bundle is not turned into a retained DOM. Text is kept only for the elements
 * whose content we check.
 */
function scanTree(text: string, path: string, xml: boolean, scripting: boolean): Found[] {
  const found: Found[] = []
  const withText: LeanElement[] = []
  // The parser re-creates formatting elements (<a>, <b>, ...) by reusing the original token's
  // attribute list; check each such list once so a re-created element is not reported twice.
  const checkedFormatting = new WeakSet<object>()
  let seq = 0
  let current = 0 // seq of the element being checked
  const emit: Emit = (violation) => found.push({ seq: current, violation })

  const adapter: TreeAdapter<DefaultTreeAdapterMap> = {
    ...defaultTreeAdapter,
    createElement(tagName, namespaceURI, attrs) {
      const tag = xml ? localName(tagName) : tagName
      const keepText = tag === 'script' || tag === 'style' || (tag === 'noscript' && scripting)
      const el: LeanElement = {
        nodeName: tagName,
        tagName,
        attrs,
        namespaceURI,
        parentNode: null,
        childNodes: NO_CHILDREN,
        seq: seq++,
        tag,
        text: keepText ? '' : null,
      }
      if (keepText) withText.push(el)
      if (FORMATTING_ELEMENTS.has(tag) && attrs.length > 0) {
        if (checkedFormatting.has(attrs)) return el
        checkedFormatting.add(attrs)
      }
      current = el.seq
      checkElement(tag, attrs, path, xml, emit)
      return el
    },
    appendChild(parent, node) {
      node.parentNode = parent
      if (parent.childNodes !== NO_CHILDREN) defaultTreeAdapter.appendChild(parent, node)
    },
    insertBefore(parent, node, reference) {
      node.parentNode = parent
      if (parent.childNodes !== NO_CHILDREN) defaultTreeAdapter.insertBefore(parent, node, reference)
    },
    detachNode(node) {
      if (node.parentNode && node.parentNode.childNodes !== NO_CHILDREN) defaultTreeAdapter.detachNode(node)
      node.parentNode = null
    },
    insertText(parent, chars) {
      const el = parent as Partial<LeanElement>
      if (typeof el.text === 'string') el.text += chars
    },
    insertTextBefore() {},
    setDocumentType() {},
    adoptAttributes(recipient, attrs) {
      // A second <html>/<body> tag adds its new attributes (onload=...) to the existing element.
      const el = recipient as LeanElement
      const have = new Set(el.attrs.map((a) => a.name))
      current = el.seq
      checkAttributes(
        el.tag,
        attrs.filter((a) => !have.has(a.name)),
        path,
        xml,
        emit,
      )
      defaultTreeAdapter.adoptAttributes(recipient, attrs)
    },
    getFirstChild(node) {
      return node?.childNodes[0] ?? null
    },
    getChildNodes(node) {
      return node?.childNodes ?? NO_CHILDREN
    },
  }

  if (scripting) parse(text, { treeAdapter: adapter, scriptingEnabled: true })
  else parseFragment(text, { treeAdapter: adapter, scriptingEnabled: false })

  for (const el of withText) {
    const content = el.text!
    current = el.seq
    if (el.tag === 'script') checkScriptText(content, attrMap(el.attrs, xml), path, emit)
    else if (el.tag === 'style') scanCss(content, path, `A <style> element in ${path}`, emit)
    else if (content.includes('<')) {
      // <noscript> is raw text for a browser running scripts, but live markup for one that is not.
      for (const f of scanTree(content, path, xml, false)) found.push({ seq: el.seq, violation: f.violation })
    }
  }
  return found
}

function attrMap(attrs: T.Element['attrs'], xml: boolean): Attrs {
  const map: Attrs = new Map()
  for (const attr of attrs) {
    const name = xml ? localName(attr.name) : attr.name
    if (!map.has(name)) map.set(name, attr.value)
  }
  return map
}

function checkElement(tag: string, rawAttrs: T.Element['attrs'], path: string, xml: boolean, emit: Emit): void {
  if (rawAttrs.length > 0) checkAttributes(tag, rawAttrs, path, xml, emit)
  if (!CHECKED_ELEMENTS.has(tag)) return
  const attrs = attrMap(rawAttrs, xml)
  if (FRAME_ELEMENTS.has(tag)) {
    const attr = ['src', 'data', 'href'].find((name) => attrs.has(name))
    const detail = snippet(attr === undefined ? `<${tag}>` : `<${tag} ${attr}=${quoted(attrs.get(attr)!)}>`)
    const image = svgImage(tag, attrs)
    const instead =
      image === undefined
        ? 'remove it (to show a video, a map or another site, link to it with <a href="..."> instead)'
        : `show the image with <img src=${quoted(image)} alt="..."> instead, which draws the same picture (without running the SVG's scripts or following its links)`
    emit({
      code: 'IFRAME',
      path,
      detail,
      message: `${path} contains an <${tag}> element; embedded frames and plugins (<iframe>, <frame>, <frameset>, <object>, <embed>, <portal>, <fencedframe>) are not allowed on published sites: ${instead}.`,
    })
    return
  }
  switch (tag) {
    case 'script':
      checkScriptSrc(attrs, path, emit)
      return
    case 'link':
      checkLink(attrs, path, emit)
      return
    case 'base': {
      const href = attrs.get('href')
      if (href !== undefined && isExternalUrl(href)) {
        const detail = snippet(href)
        emit({
          code: 'EXTERNAL_URL',
          path,
          detail,
          message: `${path} has <base href=${quoted(detail)}>, which makes every relative URL on the page (scripts and stylesheets included) point outside the site; remove the <base> element, or point it at a path inside the bundle.`,
        })
      }
    }
  }
}

/** The URL of the SVG image an <object> or <embed> shows (as Sphinx's graphviz output does), if it shows one. */
function svgImage(tag: string, attrs: Attrs): string | undefined {
  if (tag !== 'object' && tag !== 'embed') return undefined
  const url = (attrs.get(tag === 'object' ? 'data' : 'src') ?? '').trim()
  if (url === '') return undefined
  const type = (attrs.get('type') ?? '').split(';')[0]!.trim().toLowerCase()
  return type === 'image/svg+xml' || /\.svgz?$/i.test(url.split(/[?#]/)[0]!) ? url : undefined
}

function checkScriptSrc(attrs: Attrs, path: string, emit: Emit): void {
  for (const name of ['src', 'href']) {
    const url = attrs.get(name)
    if (url === undefined || !isExternalUrl(url)) continue
    const detail = snippet(url)
    emit({
      code: 'EXTERNAL_URL',
      path,
      detail,
      message: `${path} loads the script ${detail} from outside the bundle; external scripts are not allowed: copy the file into the bundle and reference it by a relative path (e.g. <script src="js/app.js">).`,
    })
  }
}

function checkScriptText(code: string, attrs: Attrs, path: string, emit: Emit): void {
  if (code.trim() === '') return
  const kind = scriptKind(attrs)
  if (kind === 'importmap') {
    checkImportMap(code, path, emit)
    return
  }
  if (kind === 'data') return
  scanJs(code, path, `An inline <script${kind === 'module' ? ' type="module"' : ''}> in ${path}`, emit)
}

function scriptKind(attrs: Attrs): ScriptKind {
  const type = attrs.get('type')
  if (type === undefined) return 'classic' // (a legacy language="..." attribute is treated as JavaScript too)
  const t = type.trim().toLowerCase()
  // MIME parameters are ignored, which is more conservative than browsers (they treat
  // "text/javascript;charset=x" as an inert data block).
  if (t === '' || JS_CONTENT_TYPES.has(t.split(';')[0]!.trim())) return 'classic'
  if (t === 'module') return 'module'
  if (t === 'importmap') return 'importmap'
  return TRANSPILED_SCRIPT.test(t) ? 'classic' : 'data'
}

function checkImportMap(json: string, path: string, emit: Emit): void {
  let map: unknown
  try {
    map = JSON.parse(json)
  } catch {
    return // browsers ignore an import map that is not valid JSON
  }
  if (!isObject(map)) return
  const tables = [map.imports, ...(isObject(map.scopes) ? Object.values(map.scopes) : [])]
  for (const table of tables) {
    if (!isObject(table)) continue
    for (const [specifier, target] of Object.entries(table)) {
      if (typeof target !== 'string' || !isExternalUrl(target)) continue
      const detail = snippet(target)
      emit({
        code: 'EXTERNAL_URL',
        path,
        detail,
        message: `The import map in ${path} maps ${quoted(specifier)} to ${detail}; modules from outside the bundle are not allowed: copy the module into the bundle and map it to a relative path (e.g. "./vendor/module.js").`,
      })
    }
  }
}

function checkLink(attrs: Attrs, path: string, emit: Emit): void {
  const rel = new Set(
    (attrs.get('rel') ?? '')
      .toLowerCase()
      .split(/[\t\n\f\r ]+/)
      .filter(Boolean),
  )
  if (rel.has('serviceworker')) {
    emit({
      code: 'SERVICE_WORKER',
      path,
      detail: snippet(attrs.get('href') ?? '<link rel="serviceworker">'),
      message: `${path} declares a service worker with <link rel="serviceworker">; service workers are not allowed on published sites: remove the element.`,
    })
  }
  const href = attrs.get('href')
  if (href === undefined || !isExternalUrl(href)) return
  if (rel.has('manifest')) {
    emit({
      code: 'EXTERNAL_MANIFEST',
      path,
      detail: snippet(href),
      message: `${path} links the web app manifest ${snippet(href)} from another site; the site's Content-Security-Policy loads manifests from the site itself only, so browsers will ignore it: put the manifest in the bundle and link it by a relative path.`,
    })
  }
  if (isPlainHttpUrl(href) && (rel.has('icon') || rel.has('apple-touch-icon') || rel.has('preload') || rel.has('prefetch'))) {
    emit({
      code: 'MIXED_CONTENT',
      path,
      detail: snippet(href),
      message: `${path} loads ${snippet(href)} over plain http (a <link rel="${[...rel].join(' ')}">); on an https site browsers upgrade such requests to https or block them: use an https URL or put the file in the bundle.`,
    })
  }
  const as = (attrs.get('as') ?? '').trim().toLowerCase()
  const detail = snippet(href)
  let what: string | undefined
  if (rel.has('stylesheet')) what = `links the stylesheet ${detail}`
  else if (rel.has('modulepreload')) what = `preloads the module ${detail} (<link rel="modulepreload">)`
  else if (rel.has('preload') && (as === 'script' || as === 'style'))
    what = `preloads the ${as === 'script' ? 'script' : 'stylesheet'} ${detail} (<link rel="preload" as="${as}">)`
  if (what === undefined) return
  emit({
    code: 'EXTERNAL_URL',
    path,
    detail,
    message: `${path} ${what}; external scripts and stylesheets are not allowed: copy the file into the bundle and link it by a relative path (e.g. <link rel="stylesheet" href="css/site.css">). For web fonts, put the font files in the bundle and declare them with @font-face.`,
  })
}

// Browsers strip leading C0/space and drop tabs and newlines anywhere in a URL.
const JAVASCRIPT_URL = /^[\u0000-\u0020]*(?:j[\t\n\r]*a[\t\n\r]*v[\t\n\r]*a[\t\n\r]*s[\t\n\r]*c[\t\n\r]*r[\t\n\r]*i[\t\n\r]*p[\t\n\r]*t[\t\n\r]*:)/i

/** Attributes whose URL the page loads by itself, as opposed to links a person follows. */
const SUBRESOURCE_ATTRIBUTES = new Set(['src', 'srcset', 'poster', 'background'])
/** Attributes naming where a form is sent. */
const FORM_TARGET_ATTRIBUTES = new Set(['action', 'formaction'])

/** Event-handler attributes (onclick=...) and javascript: URLs are scripts too; http subresources are mixed content. */
function checkAttributes(tag: string, attrs: T.Element['attrs'], path: string, xml: boolean, emit: Emit): void {
  for (const { name: rawName, value } of attrs) {
    if (SUBRESOURCE_ATTRIBUTES.has(rawName) && /http:/i.test(value)) checkSubresource(tag, rawName, value, path, emit)
    if (FORM_TARGET_ATTRIBUTES.has(rawName) && isExternalUrl(value) && !JAVASCRIPT_URL.test(value)) checkFormTarget(tag, rawName, value, path, emit)
    if (!value.includes('import') && !value.includes('serviceWorker') && !value.includes('%') && !mayCompileStrings(value)) continue
    const name = xml ? localName(rawName) : rawName
    if (name.length > 2 && name.startsWith('on')) {
      scanJs(value, path, `The ${name} attribute of a <${tag}> in ${path}`, emit)
      continue
    }
    const js = JAVASCRIPT_URL.exec(value)
    if (js) scanJs(percentDecode(value.slice(js[0].length)), path, `A javascript: URL in the ${name} attribute of a <${tag}> in ${path}`, emit)
  }
}

function checkSubresource(tag: string, name: string, value: string, path: string, emit: Emit): void {
  // srcset is a comma-separated list of "URL descriptor" candidates.
  const urls = name === 'srcset' ? value.split(',').map((candidate) => candidate.trim().split(/\s+/)[0] ?? '') : [value]
  const http = urls.find(isPlainHttpUrl)
  if (http === undefined) return
  const detail = snippet(http)
  emit({
    code: 'MIXED_CONTENT',
    path,
    detail,
    message: `${path} loads ${detail} over plain http (the ${name} of a <${tag}>); on an https site browsers upgrade such requests to https or block them: use an https URL or put the file in the bundle.`,
  })
}

function checkFormTarget(tag: string, name: string, value: string, path: string, emit: Emit): void {
  const detail = snippet(value)
  emit({
    code: 'EXTERNAL_FORM_ACTION',
    path,
    detail,
    message: `${path} sends a form to ${detail} (the ${name} of a <${tag}>); the site's Content-Security-Policy allows form-action 'self' only, so browsers will not send it: take the submissions on the site with <form method="post" action="/_forms/{name}"> (the owner reads them in the form inbox), or post to the other service from a script with fetch().`,
  })
}

function percentDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

function localName(name: string): string {
  const colon = name.lastIndexOf(':')
  return colon < 0 ? name : name.slice(colon + 1)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
