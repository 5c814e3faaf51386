/**
 * Authoring rules for markup: HTML pages, and SVG/XHTML files (which can also carry scripts and
 * frames). Files are parsed with parse5 exactly as a browser would (scripting enabled), through a
 * streaming tree adapter that checks every element the parser creates: that covers <template>
 * contents, SVG/MathML foreign content, elements moved around by error recovery, and attributes a
 * second <body>/<html> tag adds. <noscript> content is raw text when scripting is enabled, so it is
 * parsed again as a scripting-disabled fragment (what a browser with JavaScript off renders).
 *
 * - EXTERNAL_URL: <script src|href|xlink:href>, <link rel=stylesheet|modulepreload> and
 *   <link rel=preload as=script|style> with an external href, import maps mapping to external URLs
 *   (script-elements.ts), @import in <style>, and imports in inline scripts.
 * - IFRAME: <iframe>, <frame>, <frameset>, <object>, <embed>, <portal>, <fencedframe> in any
 *   namespace. (A <frame>/<frameset> the parser drops, e.g. inside <body>, is inert in browsers too.)
 *   An <object> or <embed> showing an SVG image is told to be an <img> instead.
 * - SERVICE_WORKER: <link rel=serviceworker>, and registrations in inline scripts, on* event-handler
 *   attributes and javascript: URLs.
 * - Warnings, which do not refuse the bundle but say what browsers will still block:
 *   MIXED_CONTENT, a subresource (src, srcset, poster, a <link> icon or preload) over
 *   plain http (it counts on an https site only); BLOCKED_BY_POLICY, what the site's
 *   Content-Security-Policy makes browsers refuse (core/site-policy.ts): a web app manifest, a
 *   form target or a <base href> on another origin (were the policy to allow the last, it would
 *   be EXTERNAL_URL).
 *
 * The same parse gives the site check its facts of the file (site-check/markup-facts.ts).
 *
 * SVG and XHTML are really parsed as XML by browsers; the HTML parser is a close approximation for
 * ordinary files (XML namespace prefixes such as <svg:script> or xl:href are stripped before
 * matching), not an exact one.
 */

import { type DefaultTreeAdapterMap, defaultTreeAdapter, html, Parser, type DefaultTreeAdapterTypes as T, type TreeAdapter } from 'parse5'
import {
  policyDirective,
  SITE_POLICY_ALLOWS_FOREIGN_BASE,
  SITE_POLICY_ALLOWS_FOREIGN_FORM_ACTION,
  SITE_POLICY_ALLOWS_FOREIGN_MANIFEST,
} from '../core/site-policy.ts'
import { quoted } from '../core/text.ts'
import { emptyPage, type FactsCollector, offsetSink } from '../site-check/file-facts.ts'
import { noteElement, noteHtmlAttributes, noteTitle } from '../site-check/markup-facts.ts'
import { type Emit, type Finding, isExternalUrl, isPlainHttpUrl, snippet } from './bundle-paths.ts'
import { scanCss } from './css-rules.ts'
import { mayCompileStrings, scanJs } from './js-rules.ts'
import { checkScriptSrc, checkScriptText } from './script-elements.ts'

const FRAME_ELEMENTS = new Set(['iframe', 'frame', 'frameset', 'object', 'embed', 'portal', 'fencedframe'])
const CHECKED_ELEMENTS = new Set([...FRAME_ELEMENTS, 'script', 'link', 'base'])
// Elements the parser may re-create from the same start tag (the "active formatting elements").
const FORMATTING_ELEMENTS = new Set(['a', 'b', 'big', 'code', 'em', 'font', 'i', 'nobr', 's', 'small', 'strike', 'strong', 'tt', 'u'])
const HTML_NAMESPACE = html.NS.HTML

type Attrs = Map<string, string>

/** An element as our tree adapter builds it: no child list, just what the rules need. */
interface LeanElement extends T.Element {
  /** Creation order = start-tag order; violations are sorted by it. */
  seq: number
  /** Name used for matching (namespace prefix stripped in XML mode). */
  tag: string
  /** The line its start tag ends on. */
  line: number
  /** A formatting element the parser made again from a start tag already seen: nothing new to note. */
  again: boolean
  /** Collected text content, for <script>, <style>, raw-text <noscript> and a page's <title> only. */
  text: string | null
}

interface Found {
  seq: number
  violation: Finding
}

const NO_CHILDREN = Object.freeze([]) as unknown as T.ChildNode[]

/**
 * Checks one markup file. `xml` is true for SVG/XHTML files (prefixes are stripped from names).
 * Violations carry the line of their element; `facts` takes what the site check needs of the
 * file (its page facts too, for an HTML document).
 */
export function scanMarkup(text: string, path: string, xml: boolean, emit: Emit, facts?: FactsCollector): void {
  if (facts && !xml) facts.page = emptyPage()
  const found = scanTree(text, path, xml, true, facts, 1)
  found.sort((a, b) => a.seq - b.seq) // stable: keeps the order within one element
  for (const f of found) emit(f.violation)
}

/**
 * Parses with parse5 through a streaming tree adapter: elements are checked as the parser creates
 * them (which covers <template> contents and foreign content), and element children are never
 * stored, so an 8 MiB bundle is not turned into a retained DOM. Text is kept only for the elements
 * whose content we check. The line of an element is where the tokenizer stands when the parser
 * creates it: the end of its start tag (counted from `firstLine`, for a fragment within a file).
 */
function scanTree(text: string, path: string, xml: boolean, scripting: boolean, facts: FactsCollector | undefined, firstLine: number): Found[] {
  const found: Found[] = []
  const withText: LeanElement[] = []
  // The parser re-creates formatting elements (<a>, <b>, ...) by reusing the original token's
  // attribute list; check each such list once so a re-created element is not reported twice.
  const checkedFormatting = new WeakSet<object>()
  let seq = 0
  let current = 0 // seq of the element being checked
  let currentLine = firstLine // and its line
  const emit: Emit = (violation) => {
    const line = violation.line === undefined ? currentLine : currentLine + violation.line - 1
    found.push({ seq: current, violation: { ...violation, line } })
  }
  // Assigned once made: the parser creates elements of its own while it is made.
  let parser: Parser<DefaultTreeAdapterMap> | undefined
  const lineNow = () => firstLine + (parser === undefined ? 0 : parser.tokenizer.preprocessor.line - 1)
  // Only a document has a title: foreign (SVG) titles and a fragment's do not count.
  const page = facts?.page !== null && facts !== undefined && scripting && !xml

  const adapter: TreeAdapter<DefaultTreeAdapterMap> = {
    ...defaultTreeAdapter,
    createElement(tagName, namespaceURI, attrs) {
      const tag = xml ? localName(tagName) : tagName
      const keepText = tag === 'script' || tag === 'style' || (tag === 'noscript' && scripting) || (page && tag === 'title' && namespaceURI === HTML_NAMESPACE)
      const el: LeanElement = {
        nodeName: tagName,
        tagName,
        attrs,
        namespaceURI,
        parentNode: null,
        childNodes: NO_CHILDREN,
        seq: seq++,
        tag,
        line: lineNow(),
        again: false,
        text: keepText ? '' : null,
      }
      if (keepText) withText.push(el)
      if (FORMATTING_ELEMENTS.has(tag) && attrs.length > 0) {
        el.again = checkedFormatting.has(attrs)
        if (el.again) return el
        checkedFormatting.add(attrs)
      }
      current = el.seq
      currentLine = el.line
      checkElement(tag, attrs, path, xml, emit)
      return el
    },
    onElementCreated(element, context) {
      const el = element as LeanElement
      if (facts === undefined || el.again) return
      const attrs = xml ? el.attrs.map((a) => ({ name: localName(a.name), value: a.value })) : el.attrs
      noteElement(facts, { tag: el.tag, attrs, line: el.line, inTemplate: !scripting || context.isInTemplate }, page)
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
      const added = attrs.filter((a) => !have.has(a.name))
      current = el.seq
      currentLine = el.line
      checkAttributes(el.tag, added, path, xml, emit)
      if (facts && el.tag === 'html') noteHtmlAttributes(facts, added)
      defaultTreeAdapter.adoptAttributes(recipient, attrs)
    },
    getFirstChild(node) {
      return node?.childNodes[0] ?? null
    },
    getChildNodes(node) {
      return node?.childNodes ?? NO_CHILDREN
    },
  }

  if (scripting) {
    parser = new Parser({ treeAdapter: adapter, scriptingEnabled: true })
    parser.tokenizer.write(text, true)
  } else {
    parser = Parser.getFragmentParser(null, { treeAdapter: adapter, scriptingEnabled: false })
    parser.tokenizer.write(text, true)
  }

  for (const el of withText) {
    const content = el.text!
    current = el.seq
    currentLine = el.line
    const sink = facts && offsetSink(facts, el.line)
    if (el.tag === 'script') checkScriptText(content, attrMap(el.attrs, xml), path, emit, sink)
    else if (el.tag === 'style') scanCss(content, path, `A <style> element in ${path}`, emit, sink)
    else if (el.tag === 'title') noteTitle(facts!, content)
    else if (content.includes('<')) {
      // <noscript> is raw text for a browser running scripts, but live markup for one that is not.
      for (const f of scanTree(content, path, xml, false, facts, el.line)) found.push({ seq: el.seq, violation: f.violation })
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
      if (href === undefined || !isExternalUrl(href)) return
      const detail = snippet(href)
      emit(
        SITE_POLICY_ALLOWS_FOREIGN_BASE
          ? {
              code: 'EXTERNAL_URL',
              path,
              detail,
              message: `${path} has <base href=${quoted(detail)}>, which makes every relative URL on the page (scripts and stylesheets included) point outside the site; remove the <base> element, or point it at a path inside the bundle.`,
            }
          : {
              code: 'BLOCKED_BY_POLICY',
              path,
              detail,
              message: `${path} has <base href=${quoted(detail)}>, which browsers ignore under the site's Content-Security-Policy (${policyDirective('base-uri')}), so relative URLs resolve against the page itself: remove the <base> element, or point it at a path of the site.`,
            },
      )
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
  if (rel.has('manifest') && !SITE_POLICY_ALLOWS_FOREIGN_MANIFEST) {
    emit({
      code: 'BLOCKED_BY_POLICY',
      path,
      detail: snippet(href),
      message: `${path} links the web app manifest ${snippet(href)} from another site, which browsers refuse under the site's Content-Security-Policy (${policyDirective('manifest-src')}): put the manifest in the bundle and link it by a relative path.`,
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
    if (!SITE_POLICY_ALLOWS_FOREIGN_FORM_ACTION && FORM_TARGET_ATTRIBUTES.has(rawName) && isExternalUrl(value) && !JAVASCRIPT_URL.test(value)) {
      checkFormTarget(tag, rawName, value, path, emit)
    }
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
    code: 'BLOCKED_BY_POLICY',
    path,
    detail,
    message: `${path} sends a form to ${detail} (the ${name} of a <${tag}>), which browsers refuse under the site's Content-Security-Policy (${policyDirective('form-action')}): take the submissions on the site with <form method="post" action="/_forms/{name}"> (the owner reads them in the form inbox), or post to the other service from a script with fetch().`,
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
