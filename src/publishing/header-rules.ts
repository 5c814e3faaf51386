/**
 * The `_headers` file at the bundle root, in the syntax Netlify and Cloudflare Pages share: a line
 * with a path pattern (from the site root; `*` splat and `:placeholders` as in `_redirects`), then
 * `Name: value` lines (indented by convention), `#` comment lines and blank lines. A header given
 * twice in one rule, or by several rules matching a path, is sent once with the values joined by
 * ", " (both hosts do so). Cloudflare's `! Name` removes a header an earlier matching rule of the
 * file set; it never reaches the headers Plinth sets itself.
 *
 * Only headers that cannot weaken a site's protection are accepted: ALLOWED_HEADERS, custom `X-`
 * headers other than the security ones Plinth sends and the ones that instruct a reverse proxy,
 * and PROTECTIVE_HEADERS, which can only narrow what a page may do. A site's
 * `Content-Security-Policy` is sent as a second policy beside Plinth's, never instead of it: a
 * browser enforces both, so no rule can remove or relax the policy that enforces the authoring
 * rules. Everything else is refused at publish with a violation naming the line, why, and what to
 * write instead.
 *
 * A value may name its rule's placeholders and `:splat` (Cloudflare's substitution): each is
 * filled with what the request path matched, %-encoded as in a URL path (so a value stays
 * printable ASCII whatever the visitor wrote). Values of PROTECTIVE_HEADERS and of
 * `Access-Control-*` headers must be fixed: the visitor, who writes the address, would choose
 * them. Full-URL patterns (Cloudflare's host rules; a site answers on several hosts) are refused.
 * Paths match case-sensitively, as Plinth's paths are, with the trailing-slash normalisation of
 * `_redirects`.
 */

import {
  compilePattern,
  fileLines,
  lineProblem,
  matchPattern,
  MAX_RULE_VIOLATIONS,
  type PathPattern,
  pathValue,
  PLACEHOLDER_REF,
  requestPath,
  type RuleViolation,
  ruleViolation,
} from './redirect-rules.ts'
import { isWellFormed, LONE_SURROGATE } from './bundle-paths.ts'

export const HEADERS_FILE = '_headers'
export const INVALID_HEADERS = 'INVALID_HEADERS'
export const MAX_HEADER_RULES = 1000
/** `Name: value` and `! Name` lines in the whole file. */
export const MAX_HEADER_LINES = 2000
/** Cloudflare's documented limit of a `_headers` line, which bounds every value too. */
export const MAX_HEADER_LINE_CHARS = 2000

/** What a site may set (compared case-insensitively), besides custom `X-` headers. */
export const ALLOWED_HEADERS: readonly string[] = Object.freeze([
  'Cache-Control',
  'Link',
  'X-Robots-Tag',
  'Access-Control-Allow-Origin',
  'Access-Control-Allow-Methods',
  'Access-Control-Allow-Headers',
  'Access-Control-Allow-Credentials',
  'Access-Control-Expose-Headers',
  'Access-Control-Max-Age',
  'Content-Language',
  'Referrer-Policy',
  'Permissions-Policy',
])

const ALLOWED: ReadonlySet<string> = new Set(ALLOWED_HEADERS.map((name) => name.toLowerCase()))

/**
 * Headers a site may send that can only narrow what its pages may do (Plinth sends none of them
 * but the Content-Security-Policy, which a site's own policy joins rather than replaces).
 */
export const PROTECTIVE_HEADERS: readonly string[] = Object.freeze([
  'Content-Security-Policy',
  'X-Frame-Options',
  'Cross-Origin-Opener-Policy',
  'Cross-Origin-Embedder-Policy',
  'Cross-Origin-Resource-Policy',
])

/** The values browsers read, lowercase, per protective header that has a fixed set (before any `;` parameters). */
const PROTECTIVE_VALUES: ReadonlyMap<string, readonly string[]> = new Map([
  ['x-frame-options', ['deny', 'sameorigin']],
  ['cross-origin-opener-policy', ['same-origin', 'same-origin-allow-popups', 'noopener-allow-popups', 'unsafe-none']],
  ['cross-origin-embedder-policy', ['require-corp', 'credentialless', 'unsafe-none']],
  ['cross-origin-resource-policy', ['same-origin', 'same-site', 'cross-origin']],
])

const PROTECTIVE: ReadonlySet<string> = new Set(PROTECTIVE_HEADERS.map((name) => name.toLowerCase()))

const REMOVE = 'remove the line'
const COMPUTED = `Plinth computes it for every response from the file it serves: ${REMOVE}`
const HOP_BY_HOP = `it is a hop-by-hop header that belongs to the connection, not to a site: ${REMOVE}`
const LEGACY_CSP = 'it is a legacy name of the Content-Security-Policy that current browsers ignore: write Content-Security-Policy instead'

/** Why particular headers are refused and what to do instead, lowercase name -> reason. */
const REFUSED: ReadonlyMap<string, string> = new Map([
  [
    'content-security-policy-report-only',
    'a report-only policy is not supported: try a policy on a preview version (publish without promoting) with Content-Security-Policy instead',
  ],
  ['x-content-security-policy', LEGACY_CSP],
  ['x-webkit-csp', LEGACY_CSP],
  ['x-content-type-options', `Plinth already sends "nosniff" on every response, and a site cannot change it: ${REMOVE}`],
  ['x-xss-protection', `browsers no longer read it, and Plinth's Content-Security-Policy protects against injected scripts instead: ${REMOVE}`],
  ['set-cookie', "a site may not set cookies (its host shares the site domain with every other site): keep visitors' state in the page, e.g. localStorage"],
  ['content-type', "Plinth sends each file's type from its extension: give the file's contentType at publish instead"],
  ['strict-transport-security', 'HSTS belongs to the TLS set-up in front of Plinth (set it in the reverse proxy), not to one site'],
  ['content-length', COMPUTED],
  ['content-encoding', COMPUTED],
  ['etag', COMPUTED],
  ['vary', COMPUTED],
  ['location', 'write a _redirects rule to send visitors elsewhere'],
  ['basic-auth', "set a site password instead (Netlify's Basic-Auth is not supported)"],
  ...['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade'].map((name): [string, string] => [name, HOP_BY_HOP]),
])

/** Response headers some reverse proxies act on (nginx X-Accel-Redirect serves internal locations, X-Sendfile any file). */
const PROXY_INSTRUCTION = /^x-(accel-|sendfile|lighttpd-|litespeed-)/

// RFC 9110 token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// Visible ASCII, spaces and tabs: the file is UTF-8 text, and anything else would reach browsers as Latin-1.
const BAD_VALUE_CHAR = /[^\t\x20-\x7e]/
const ABSOLUTE = /^[a-z][a-z0-9+.-]*:\/\//i

/** A part of a value: literal text, or the index of a capture of the rule's pattern (placeholders, then the splat). */
type ValuePart = string | number

export interface HeaderValue {
  name: string
  /** The name lowercased. */
  lower: string
  /** The value as written. */
  value: string
  /** The value in parts when it names the rule's placeholders or splat, else null (sent as written). */
  parts: ValuePart[] | null
}

export interface HeaderRule {
  line: number
  path: string
  pattern: PathPattern
  /** Headers in order, each name once (values of repeats joined). */
  set: HeaderValue[]
  /** Lowercase names removed (`! Name`) before this rule's own headers apply. */
  unset: string[]
  /** Whether a value names a placeholder or the splat: its headers depend on the path, not on the rule alone. */
  filled: boolean
}

export interface HeaderRules {
  /** Every rule, in file order. */
  list: readonly HeaderRule[]
}

export type HeaderList = ReadonlyArray<readonly [string, string]>

/** What a path without `_headers` rules gets. */
export const NO_HEADERS: HeaderList = Object.freeze([])

/** Why a header name may not be set, or null when it may. */
function headerNameProblem(name: string): string | null {
  if (!TOKEN.test(name)) return `${JSON.stringify(name)} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`
  const lower = name.toLowerCase()
  const reason = REFUSED.get(lower) ?? (lower.startsWith('proxy-') ? HOP_BY_HOP : null)
  if (reason !== null) return `${name} cannot be set: ${reason}`
  if (PROXY_INSTRUCTION.test(lower)) return `${name} cannot be set: it instructs the reverse proxy in front of Plinth: ${REMOVE}`
  if (ALLOWED.has(lower) || PROTECTIVE.has(lower) || lower.startsWith('x-')) return null
  return (
    `${name} is not a header a site may set: allowed are ${[...ALLOWED_HEADERS, ...PROTECTIVE_HEADERS].join(', ')} ` +
    'and custom X- headers (name your own data X-Something)'
  )
}

/** Why a value of an accepted header is refused, or null. */
function headerValueProblem(name: string, lower: string, value: string, parts: ValuePart[] | null): string | null {
  if (parts !== null && (PROTECTIVE.has(lower) || lower.startsWith('access-control-')))
    return `the value of ${name} names a placeholder: it must be the same for every path the rule matches, or whoever writes the address would choose it`
  const known = PROTECTIVE_VALUES.get(lower)
  const token = value.split(';')[0]!.trim().toLowerCase()
  if (known === undefined || known.includes(token)) return null
  if (lower === 'x-frame-options' && token.startsWith('allow-from'))
    return "ALLOW-FROM is obsolete and browsers ignore it: write Content-Security-Policy: frame-ancestors 'self' https://allowed.example instead"
  return `${JSON.stringify(value)} is not a value of ${name}: browsers read ${known.map((v) => (lower === 'x-frame-options' ? v.toUpperCase() : v)).join(', ')}`
}

/** The parts of a value naming placeholders or the splat of `pattern`, null when it names none (other `:word`s are text). */
function valueParts(value: string, pattern: PathPattern): ValuePart[] | null {
  const parts: ValuePart[] = []
  let at = 0
  for (const ref of value.matchAll(PLACEHOLDER_REF)) {
    const name = ref[1]!
    const index = name === 'splat' ? (pattern.hasSplat ? pattern.names.length : -1) : pattern.names.indexOf(name)
    if (index === -1) continue
    parts.push(value.slice(at, ref.index), index)
    at = ref.index + ref[0].length
  }
  if (parts.length === 0) return null
  parts.push(value.slice(at))
  return parts.filter((part) => part !== '')
}

/** Parses and checks `_headers`. Publish only when `violations` is empty. */
export function parseHeaders(text: string): { rules: HeaderRules; violations: RuleViolation[] } {
  const list: HeaderRule[] = []
  const violations: RuleViolation[] = []
  const lines = fileLines(text)
  // The rule being read; undefined before the first path line, null after a refused one (its header lines are still checked).
  let rule: HeaderRule | null | undefined
  let pathLines = 0
  let headerLines = 0
  // Header lines under the current path, refused ones included: a rule whose lines were all refused already has its violations.
  let under = 0
  const report = (line: number, text: string, problem: string) => violations.push(ruleViolation(INVALID_HEADERS, HEADERS_FILE, line, text, problem))
  const close = () => {
    if (rule && under === 0) report(rule.line, rule.path, `${JSON.stringify(rule.path)} has no headers under it: write "  Name: value" lines below the path`)
    else if (rule && (rule.set.length > 0 || rule.unset.length > 0)) list.push(rule)
  }
  for (let i = 0; i < lines.length && violations.length < MAX_RULE_VIOLATIONS; i++) {
    const raw = lines[i]!
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const fail = (problem: string) => report(i + 1, raw, problem)
    const problem = lineProblem(raw, MAX_HEADER_LINE_CHARS)
    if (problem !== null) {
      under++
      fail(problem)
      continue
    }
    if (line.startsWith('/') || ABSOLUTE.test(line)) {
      close()
      rule = null
      under = 0
      if (++pathLines > MAX_HEADER_RULES) {
        fail(`the file has more than ${MAX_HEADER_RULES} rules: use splats ("/assets/*") to cover many paths with one rule`)
        break
      }
      const pattern = ABSOLUTE.test(line)
        ? `${JSON.stringify(line)} is a full URL: rules for one host are not supported, write a path of the site (e.g. "/assets/*")`
        : /\s/.test(line)
          ? `the path ${JSON.stringify(line)} contains a space: a path line holds the path alone (write a space as %20; comments go on lines of their own)`
          : compilePattern(line)
      if (typeof pattern === 'string') fail(pattern)
      else rule = { line: i + 1, path: line, pattern, set: [], unset: [], filled: false }
      continue
    }
    under++
    if (++headerLines > MAX_HEADER_LINES) {
      fail(`the file has more than ${MAX_HEADER_LINES} header lines`)
      break
    }
    if (rule === undefined) {
      fail('a header line must follow a path line: start the rule with the path it applies to (e.g. "/*" or "/assets/*")')
      continue
    }
    const detach = line.startsWith('!')
    const colon = line.indexOf(':')
    if (!detach && colon === -1) {
      fail(`expected "Name: value" or a path starting with "/", got ${JSON.stringify(line)}`)
      continue
    }
    const name = (detach ? line.slice(1) : line.slice(0, colon)).trim()
    const value = detach ? '' : line.slice(colon + 1).trim()
    const nameProblem = headerNameProblem(name)
    if (nameProblem !== null) fail(nameProblem)
    else if (!detach && value === '') fail(`${name} has no value`)
    else if (BAD_VALUE_CHAR.test(value)) fail(`the value of ${name} contains a character other than printable ASCII: %-encode URLs and keep values ASCII`)
    else if (rule !== null) {
      const lower = name.toLowerCase()
      const parts = detach ? null : valueParts(value, rule.pattern)
      const valueProblem = detach ? null : headerValueProblem(name, lower, value, parts)
      const same = rule.set.find((header) => header.lower === lower)
      if (valueProblem !== null) fail(valueProblem)
      else if (detach) rule.unset.push(lower)
      else {
        rule.filled ||= parts !== null
        if (same === undefined) rule.set.push({ name, lower, value, parts })
        else Object.assign(same, joinValues(same, { name, lower, value, parts }))
      }
    }
  }
  close()
  // A rule with no headers is reported at its path line, after the lines below it were read.
  violations.sort((a, b) => a.line - b.line)
  return { rules: { list }, violations }
}

/** Two values of one header as one, joined with ", " as both hosts send repeats. */
function joinValues(first: HeaderValue, second: HeaderValue): Pick<HeaderValue, 'value' | 'parts'> {
  const parts = first.parts === null && second.parts === null ? null : [...(first.parts ?? [first.value]), ', ', ...(second.parts ?? [second.value])]
  return { value: `${first.value}, ${second.value}`, parts }
}

/** The headers of each set of matching rules seen, per parsed file (bounded): one list for every path that matches the same rules. */
const byMatchingRules = new WeakMap<HeaderRules, Map<string, HeaderList>>()
const MATCHING_SETS_LIMIT = 1024

/**
 * The headers `_headers` adds for a decoded request path: every matching rule in file order,
 * repeats joined with ", ". Where no matching rule fills a value from the path, the list depends on
 * which rules match alone, so paths that match the same rules share one list (and serving keeps
 * one merged header list per file for all of them); otherwise it is built for the path.
 */
export function headersFor(rules: HeaderRules, pathname: string): HeaderList {
  if (rules.list.length === 0) return NO_HEADERS
  const path = requestPath(pathname)
  if (path === null) return NO_HEADERS
  const captures: string[] = []
  const matching: number[] = []
  // What each matching rule that fills values from the path captured, by its place in `matching`.
  let captured: string[][] | null = null
  for (let i = 0; i < rules.list.length; i++) {
    const rule = rules.list[i]!
    if (!matchPattern(rule.pattern, path, captures)) continue
    if (rule.filled) (captured ??= [])[matching.length] = captures.slice()
    matching.push(i)
  }
  if (matching.length === 0) return NO_HEADERS
  const matched = () => matching.map((i) => rules.list[i]!)
  if (captured !== null) return headersOf(matched(), captured)
  let lists = byMatchingRules.get(rules)
  if (lists === undefined) byMatchingRules.set(rules, (lists = new Map<string, HeaderList>()))
  const key = matching.join(',')
  let found = lists.get(key)
  if (found === undefined) {
    found = headersOf(matched(), [])
    if (lists.size >= MATCHING_SETS_LIMIT) lists.clear()
    lists.set(key, found)
  }
  return found
}

const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g')

/** A captured piece of the decoded path as header text: %-encoded as in a URL path, so printable ASCII. */
function captureValue(capture: string): string {
  return pathValue(isWellFormed(capture) ? capture : capture.replace(LONE_SURROGATES, '\ufffd'))
}

function filledValue(header: HeaderValue, captures: string[] | undefined): string {
  if (header.parts === null) return header.value
  let out = ''
  for (const part of header.parts) out += typeof part === 'string' ? part : captureValue(captures![part]!)
  return out
}

/** The headers of the matching rules; `captured[i]` holds what the i-th of them captured, when it fills values. */
function headersOf(matching: HeaderRules['list'], captured: ReadonlyArray<string[] | undefined>): HeaderList {
  const out: Array<{ name: string; lower: string; value: string }> = []
  matching.forEach((rule, i) => {
    for (const lower of rule.unset) {
      const at = out.findIndex((header) => header.lower === lower)
      if (at !== -1) out.splice(at, 1)
    }
    for (const header of rule.set) {
      const value = filledValue(header, captured[i])
      const same = out.find((seen) => seen.lower === header.lower)
      if (same === undefined) out.push({ name: header.name, lower: header.lower, value })
      else same.value = `${same.value}, ${value}`
    }
  })
  return out.length === 0 ? NO_HEADERS : Object.freeze(out.map(({ name, value }) => Object.freeze([name, value] as const)))
}
