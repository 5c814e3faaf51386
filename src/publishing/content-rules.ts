/**
 * The content rules of one file, chosen by its content type (contentTypeFor): text/html ->
 * html-rules; image/svg+xml and application/xhtml+xml -> html-rules in XML mode; text/css ->
 * css-rules; JavaScript types -> js-rules. A file under `_templates/` is also parsed as a Liquid
 * template (template-rules), and `_redirects` and `_headers` at the bundle root are checked as
 * serving rules, whatever their type. Pure and synchronous: the publish pipeline runs these in
 * worker threads (content-scans.pool.ts), checkBundle on the calling thread. Asked for them, the
 * same pass gathers the file's facts for the site check (site-check/file-facts.ts).
 */
import { lookup } from 'mime-types'
import { FactsCollector, type FileFacts } from '../site-check/file-facts.ts'
import type { Emit, Finding } from './bundle-paths.ts'
import { scanCss } from './css-rules.ts'
import { HEADERS_FILE, parseHeaders } from './header-rules.ts'
import { scanMarkup } from './html-rules.ts'
import { JS_CONTENT_TYPES, scanJs } from './js-rules.ts'
import { parseRedirects, REDIRECTS_FILE, type RuleViolation } from './redirect-rules.ts'
import { noteRedirects } from '../site-check/redirect-facts.ts'
import { isTemplateFile, scanTemplate } from './template-rules.ts'
import { type FormDeclaration, formsOfPage } from './form-declarations.ts'
import { ViolationCollector } from './violation-caps.ts'

/** A file's text that the content rules read (html-rules, css-rules, js-rules, template-rules). */
export interface TextScan {
  path: string
  contentType: string
  text: string
}

/** Codes the content rules report that refuse nothing: they become warnings. */
export const WARNING_CODES: ReadonlySet<string> = new Set(['MIXED_CONTENT', 'BLOCKED_BY_POLICY'])

/** What the content rules found in one file. */
export interface ScanOutcome {
  /** Its violations (without lines), then its warnings (with their line, when known). */
  found: Finding[]
  /** What the site check needs of it, when asked for. */
  facts: FileFacts | null
  /** The forms it declares: an HTML page's (form-declarations.ts), none for any other file. */
  forms: FormDeclaration[]
}

/** The type of a site's pages: TOO_MANY_PAGES counts files of it. */
export const HTML_CONTENT_TYPE = 'text/html'
const MARKUP_XML = new Set(['image/svg+xml', 'application/xhtml+xml'])

/**
 * The content type a file is served with: the override's bare type (parameters such as
 * "; charset=utf-8" dropped, lowercased) when given, else inferred from the extension, else
 * application/octet-stream.
 */
export function contentTypeFor(path: string, override?: string): string {
  if (override !== undefined) {
    const bare = override.split(';')[0]!.trim().toLowerCase()
    if (bare !== '') return bare
  }
  const inferred = lookup(path)
  return inferred === false ? 'application/octet-stream' : inferred.toLowerCase()
}

/** Whether the content rules read files of this type (so their bytes are needed). */
function needsScanning(contentType: string): boolean {
  return contentType === HTML_CONTENT_TYPE || MARKUP_XML.has(contentType) || contentType === 'text/css' || JS_CONTENT_TYPES.has(contentType)
}

/**
 * Whether the rules read this file's text: by its type (needsScanning), as a template, or as the
 * serving configuration at the bundle root (`_redirects`, `_headers`), whatever its type.
 */
export function readsText(path: string, contentType: string): boolean {
  return needsScanning(contentType) || isTemplateFile(path, contentType) || path === REDIRECTS_FILE || path === HEADERS_FILE
}

/** scanText on each text, on the calling thread (the pipeline runs it in worker threads). */
export function scanTexts(scans: readonly TextScan[], limit: number, withFacts = false): ScanOutcome[] {
  return scans.map((scan) => scanText(scan, limit, withFacts))
}

/**
 * The content rules on one file's text: what they report, at most `limit` of a code beyond the
 * first, violations and warnings capped apart (a page of many warnings keeps all its violations);
 * `withFacts`, and the file's facts for the site check.
 */
export function scanText(scan: TextScan, limit: number, withFacts = false): ScanOutcome {
  const violations = new ViolationCollector<Finding>(limit)
  const warnings = new ViolationCollector<Finding>(limit)
  // The interface's PublishViolation has no line field: a refusal's line is in its `detail` and `message`.
  const emit: Emit = ({ line, ...v }) => (WARNING_CODES.has(v.code) ? warnings.add(line === undefined ? v : { ...v, line }) : violations.add(v))
  const facts = withFacts ? new FactsCollector() : undefined
  const { text, path, contentType } = scan
  if (contentType === HTML_CONTENT_TYPE) scanMarkup(text, path, false, emit, facts)
  else if (MARKUP_XML.has(contentType)) scanMarkup(text, path, true, emit, facts)
  else if (contentType === 'text/css') scanCss(text, path, path, emit, facts)
  else if (JS_CONTENT_TYPES.has(contentType)) scanJs(text, path, path, emit, facts)
  if (isTemplateFile(path, contentType)) scanTemplate(text, path, emit)
  if (path === REDIRECTS_FILE) {
    const { rules, violations: found } = parseRedirects(text)
    found.forEach((v) => emit(withoutLine(v)))
    if (facts) noteRedirects(facts, rules)
  } else if (path === HEADERS_FILE) parseHeaders(text).violations.forEach((v) => emit(withoutLine(v)))
  return {
    found: [...violations.list, ...warnings.list],
    facts: facts?.facts() ?? null,
    forms: contentType === HTML_CONTENT_TYPE ? formsOfPage(text) : [],
  }
}

const withoutLine = ({ code, path, detail, message }: RuleViolation): Finding => ({ code, path, detail, message })
