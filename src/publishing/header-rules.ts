/**
 * The `_headers` file at the bundle root, in the syntax Netlify and Cloudflare Pages share: a line
 * with a path pattern (from the site root; `*` splat and `:placeholders` as in `_redirects`), then
 * `Name: value` lines (indented by convention), `#` comment lines and blank lines. A header given
 * twice in one rule, or by several rules matching a path, is sent once with the values joined by
 * ", " (both hosts do so). Cloudflare's `! Name` removes a header an earlier matching rule of the
 * file set; it never reaches the headers Plinth sets itself.
 *
 * Only headers that cannot weaken a site's protection are accepted (ALLOWED_HEADERS, and custom
 * `X-` headers other than the security ones Plinth sends and the ones that instruct a reverse
 * proxy); everything else is refused at publish with a violation naming the line, so no rule can
 * remove or relax the Content-Security-Policy that enforces the authoring rules in browsers.
 *
 * Not supported, and refused rather than ignored: full-URL patterns (Cloudflare's host rules; a
 * site answers on several hosts) and placeholders in values (Cloudflare-only: the value would vary
 * per request path, and carry whatever the visitor put there). Paths match case-sensitively, as
 * Plinth's paths are, with the trailing-slash normalisation of `_redirects`.
 */

import {
  compilePattern,
  fileLines,
  lineProblem,
  matchPattern,
  MAX_RULE_VIOLATIONS,
  type PathPattern,
  PLACEHOLDER_REF,
  requestPath,
  type RuleViolation,
  ruleViolation,
} from './redirect-rules.ts'

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

const PLINTH_SETS = 'Plinth sets it on every response to protect the site, and a site cannot change or remove it'
const COMPUTED = 'Plinth computes it for every response from the file it serves'
const HOP_BY_HOP = 'it is a hop-by-hop header that belongs to the connection, not to a site'

/** Why particular headers are refused, lowercase name -> reason. */
const REFUSED: ReadonlyMap<string, string> = new Map([
  ['content-security-policy', `${PLINTH_SETS}: it enforces the authoring rules in browsers`],
  ['content-security-policy-report-only', `${PLINTH_SETS} (the Content-Security-Policy family)`],
  ['x-content-security-policy', `${PLINTH_SETS} (a legacy name of the Content-Security-Policy)`],
  ['x-webkit-csp', `${PLINTH_SETS} (a legacy name of the Content-Security-Policy)`],
  ['x-content-type-options', PLINTH_SETS],
  ['x-frame-options', PLINTH_SETS],
  ['x-xss-protection', PLINTH_SETS],
  ['set-cookie', 'a site may not set cookies (its host shares the site domain with every other site)'],
  ['content-type', "Plinth sends each file's type from its extension: give the file's contentType at publish instead"],
  ['strict-transport-security', 'HSTS belongs to the TLS set-up in front of Plinth (the reverse proxy), not to one site'],
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

export interface HeaderRule {
  line: number
  path: string
  pattern: PathPattern
  /** Headers in order, each name once (values of repeats joined); `lower` is the name lowercased. */
  set: Array<{ name: string; lower: string; value: string }>
  /** Lowercase names removed (`! Name`) before this rule's own headers apply. */
  unset: string[]
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
  if (PROXY_INSTRUCTION.test(lower)) return `${name} cannot be set: it instructs the reverse proxy in front of Plinth`
  if (ALLOWED.has(lower) || lower.startsWith('x-')) return null
  return `${name} is not a header a site may set: allowed are ${ALLOWED_HEADERS.join(', ')} and custom X- headers`
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
      else rule = { line: i + 1, path: line, pattern, set: [], unset: [] }
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
      const placeholder = [...value.matchAll(PLACEHOLDER_REF)].find(
        ([, ref]) => rule!.pattern.names.includes(ref!) || (ref === 'splat' && rule!.pattern.hasSplat),
      )
      const lower = name.toLowerCase()
      const same = rule.set.find((header) => header.lower === lower)
      if (placeholder !== undefined)
        fail(
          `the value of ${name} uses ${placeholder[0]}: placeholders are not substituted in header values, which are the same for every path the rule matches`,
        )
      else if (detach) rule.unset.push(lower)
      else if (same !== undefined) same.value = `${same.value}, ${value}`
      else rule.set.push({ name, lower, value })
    }
  }
  close()
  // A rule with no headers is reported at its path line, after the lines below it were read.
  violations.sort((a, b) => a.line - b.line)
  return { rules: { list }, violations }
}

/** The headers of each set of matching rules seen, per parsed file (bounded): one list for every path that matches the same rules. */
const byMatchingRules = new WeakMap<HeaderRules, Map<string, HeaderList>>()
const MATCHING_SETS_LIMIT = 1024

/**
 * The headers `_headers` adds for a decoded request path: every matching rule in file order,
 * repeats joined with ", ". Depends on which rules match alone, so paths that match the same rules
 * get the same list, and serving keeps one merged header list per file for all of them.
 */
export function headersFor(rules: HeaderRules, pathname: string): HeaderList {
  if (rules.list.length === 0) return NO_HEADERS
  const path = requestPath(pathname)
  if (path === null) return NO_HEADERS
  const captures: string[] = []
  const matching: number[] = []
  rules.list.forEach((rule, i) => {
    if (matchPattern(rule.pattern, path, captures)) matching.push(i)
  })
  if (matching.length === 0) return NO_HEADERS
  let lists = byMatchingRules.get(rules)
  if (lists === undefined) byMatchingRules.set(rules, (lists = new Map()))
  const key = matching.join(',')
  let found = lists.get(key)
  if (found === undefined) {
    found = headersOf(matching.map((i) => rules.list[i]!))
    if (lists.size >= MATCHING_SETS_LIMIT) lists.clear()
    lists.set(key, found)
  }
  return found
}

function headersOf(matching: HeaderRules['list']): HeaderList {
  const out: Array<{ name: string; lower: string; value: string }> = []
  for (const rule of matching) {
    for (const lower of rule.unset) {
      const at = out.findIndex((header) => header.lower === lower)
      if (at !== -1) out.splice(at, 1)
    }
    for (const header of rule.set) {
      const same = out.find((seen) => seen.lower === header.lower)
      if (same === undefined) out.push({ ...header })
      else same.value = `${same.value}, ${header.value}`
    }
  }
  return out.length === 0 ? NO_HEADERS : Object.freeze(out.map(({ name, value }) => Object.freeze([name, value] as const)))
}
