/**
 * The `_redirects` file at the bundle root, in the syntax Netlify and Cloudflare Pages share: one
 * rule a line, `from to [status]`, `#` comments (whole lines, and a trailing token starting with
 * `#`, as both hosts' parsers allow; `/a /b#part` keeps its fragment), blank lines.
 *
 * - `from` is a site path: a `*` splat (one, anywhere; `/blog/*` also matches `/blog`) and
 *   whole-segment `:placeholders`. Full URLs (Netlify's domain-level rules) are refused: a site
 *   answers on several hosts (its slug, previews, custom domains), so a host in a rule would
 *   silently apply to some of them only.
 * - `to` is a path of the site or, for 301/302/303/307/308, an http(s) URL; `:splat` and the
 *   placeholders of `from` are substituted, in the path, query and fragment (never in a host, which
 *   would let any visitor pick where the site sends people). 200 rewrites and 404 serve the target
 *   path of the same version with that status; Plinth never proxies, so both refuse URLs.
 * - The status defaults to 301 (Netlify; Cloudflare's default 302 is the one difference). A `!`
 *   suffix (Netlify's force) is accepted: a rule is skipped when a file exists at the requested
 *   path, or a folder Plinth would send on to `/folder/` (Netlify's shadowing), unless it is
 *   forced. Query-parameter conditions (`/store id=:id`) and Netlify's `Country=`/`Role=`
 *   conditions are refused, never guessed at.
 *
 * Matching works on the decoded path, as serving looks files up, with Netlify's trailing-slash
 * normalisation (`/about` and `/about/` match each other). Every rule is compiled once at parse
 * into literal segments, placeholders and at most one splat, compared with string equality and
 * startsWith/endsWith: no regex is built from what the file says, and a request costs time linear
 * in the rules and the path however hostile the file.
 */

import type { PublishViolation } from '../core/errors.ts'
import { isWellFormed, snippet } from './bundle-paths.ts'

export const REDIRECTS_FILE = '_redirects'
export const INVALID_REDIRECTS = 'INVALID_REDIRECTS'
export const MAX_REDIRECT_RULES = 1000
/** Cloudflare's documented limit of a redirect line. */
export const MAX_REDIRECT_LINE_CHARS = 1000
/** Violations listed per file: a file that is wrong everywhere needs fixing, not a longer list. */
export const MAX_RULE_VIOLATIONS = 100

/** A violation in `_redirects` or `_headers`: `detail` repeats the line number for clients that ignore `line`. */
export interface RuleViolation extends PublishViolation {
  path: string
  line: number
  detail: string
}

export type RedirectStatus = 301 | 302 | 303 | 307 | 308
export type RewriteStatus = 200 | 404

/** A segment of a pattern: literal (decoded) text, or the index of a placeholder. */
type Segment = string | number

export interface PathPattern {
  source: string
  /** Placeholder names in order; a match fills `captures` at their index, the splat after them. */
  names: string[]
  hasSplat: boolean
  /** The normalised path when the pattern has no placeholder and no splat: matched by equality. */
  exact: string | null
  before: Segment[]
  splatHead: string
  splatTail: string
  after: Segment[]
}

/** A request path prepared once for every pattern: `key` has no trailing slash (but `/`), `starts` locates each segment in it. */
export interface RequestPath {
  key: string
  segments: string[]
  starts: number[]
}

const PLACEHOLDER_NAME = /^[A-Za-z]\w*$/
/** A `:name` placeholder where a value refers to one (targets, and `_headers` values). */
export const PLACEHOLDER_REF = /:([A-Za-z]\w*)/g
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i
const HTTP_URL = /^https?:\/\//i

function decodeText(text: string): string | null {
  if (!text.includes('%')) return text
  try {
    return decodeURIComponent(text)
  } catch {
    return null
  }
}

/** Compiles a `from` (or `_headers` path) pattern; a string says what is wrong with it. */
export function compilePattern(source: string): PathPattern | string {
  if (!source.startsWith('/')) return `${JSON.stringify(source)} does not start with "/" (write the path from the site root, e.g. "/old-page")`
  if (source.startsWith('//')) return `${JSON.stringify(source)} starts with "//": write the path from the site root with one "/"`
  if (/[?#]/.test(source))
    return `${JSON.stringify(source)} contains "?" or "#": a rule matches the path alone (the query string is kept, fragments never reach the server)`
  if (source.indexOf('*') !== source.lastIndexOf('*')) return `${JSON.stringify(source)} has more than one "*": a pattern may have one splat`
  if (BAD_PERCENT.test(source)) return `${JSON.stringify(source)} has a "%" that is not a %XX escape`
  const trimmed = source.length > 1 && source.endsWith('/') ? source.slice(0, -1) : source
  const pattern: PathPattern = { source, names: [], hasSplat: false, exact: null, before: [], splatHead: '', splatTail: '', after: [] }
  for (const part of trimmed === '/' ? [] : trimmed.slice(1).split('/')) {
    const star = part.indexOf('*')
    if (part.startsWith(':')) {
      const name = part.slice(1)
      if (star !== -1 || !PLACEHOLDER_NAME.test(name))
        return `"${part}" is not a placeholder: a placeholder is a whole segment, ":" then a letter, then letters, digits or "_"`
      if (name === 'splat') return '":splat" is not a placeholder of its own: it names what "*" matches'
      if (pattern.names.includes(name)) return `the placeholder ":${name}" appears twice`
      ;(pattern.hasSplat ? pattern.after : pattern.before).push(pattern.names.push(name) - 1)
      continue
    }
    const literals = (star === -1 ? [part] : [part.slice(0, star), part.slice(star + 1)]).map(decodeText)
    if (literals.includes(null)) return `${JSON.stringify(source)} has a %-escape that is not UTF-8`
    if (literals.some((literal) => literal!.includes('/')))
      return `${JSON.stringify(source)} has an escaped "/" (%2F), which never matches: paths are matched decoded`
    if (star === -1) (pattern.hasSplat ? pattern.after : pattern.before).push(literals[0]!)
    else [pattern.hasSplat, pattern.splatHead, pattern.splatTail] = [true, literals[0]!, literals[1]!]
  }
  if (!pattern.hasSplat && pattern.names.length === 0) pattern.exact = `/${pattern.before.join('/')}`
  return pattern
}

/** Prepares a decoded request path (starting with "/") for matching; null when it is not one. */
export function requestPath(pathname: string): RequestPath | null {
  if (pathname.charCodeAt(0) !== 47 /* / */) return null
  const key = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname
  const segments = key === '/' ? [] : key.slice(1).split('/')
  const starts: number[] = []
  let at = 1
  for (const segment of segments) {
    starts.push(at)
    at += segment.length + 1
  }
  return { key, segments, starts }
}

function matchSegments(pattern: Segment[], segments: string[], offset: number, captures: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!
    const got = segments[offset + i]!
    if (typeof want === 'number') {
      if (got === '') return false
      captures[want] = got
    } else if (want !== got) return false
  }
  return true
}

/** Whether the pattern matches; fills `captures` (placeholders by index, then the splat). */
export function matchPattern(pattern: PathPattern, path: RequestPath, captures: string[]): boolean {
  if (pattern.exact !== null) return pattern.exact === path.key
  const { before, after, splatHead: head, splatTail: tail } = pattern
  const { segments, starts, key } = path
  const n = segments.length
  if (!pattern.hasSplat) return n === before.length && matchSegments(before, segments, 0, captures)
  const first = before.length
  const last = n - after.length
  if (last < first || !matchSegments(before, segments, 0, captures) || !matchSegments(after, segments, last, captures)) return false
  if (last === first) {
    // Only a bare trailing "/*" matches nothing at all: "/blog/*" matches "/blog" and "/blog/".
    if (after.length !== 0 || head !== '' || tail !== '') return false
    captures[pattern.names.length] = ''
    return true
  }
  const start = starts[first]!
  const end = starts[last - 1]! + segments[last - 1]!.length
  if (end - start < head.length + tail.length || !key.startsWith(head, start) || !key.endsWith(tail, end)) return false
  captures[pattern.names.length] = key.slice(start + head.length, end - tail.length)
  return true
}

/** A part of a target: literal text, or a capture index. */
type Piece = string | number

interface Target {
  /** `https://host` for an external target, '' for a path of the site. */
  origin: string
  path: Piece[]
  /** The target's own query (with its "?"), null when it has none: the request's is kept then. */
  query: Piece[] | null
  fragment: Piece[] | null
}

export interface RedirectRule {
  line: number
  from: string
  to: string
  status: RedirectStatus | RewriteStatus
  force: boolean
  pattern: PathPattern
  target: Target
}

export interface RedirectRules {
  /** Every rule, in file order. */
  list: readonly RedirectRule[]
  /** Whether any rule is forced (`!`): only those apply where a file exists. */
  forced: boolean
}

export type RedirectMatch = { status: RedirectStatus; location: string } | { status: RewriteStatus; rewritePath: string; search: string }

/** Splits target text into pieces; a string result is what is wrong. */
function pieces(text: string, pattern: PathPattern, decode: boolean): Piece[] | string {
  const out: Piece[] = []
  let at = 0
  const literal = (raw: string): string | null => (decode ? decodeText(raw) : raw.replace(/[^\x00-\x7f]+/g, encodeURIComponent))
  for (const ref of text.matchAll(PLACEHOLDER_REF)) {
    const name = ref[1]!
    const index = name === 'splat' ? (pattern.hasSplat ? pattern.names.length : -1) : pattern.names.indexOf(name)
    if (index === -1)
      return name === 'splat'
        ? `the target uses ":splat" but ${JSON.stringify(pattern.source)} has no "*" to fill it`
        : `the target uses ":${name}", which is no placeholder of ${JSON.stringify(pattern.source)} (write a literal ":" as %3A)`
    const before = literal(text.slice(at, ref.index))
    if (before === null) return 'the target has a %-escape that is not UTF-8'
    out.push(before, index)
    at = ref.index + ref[0].length
  }
  const rest = literal(text.slice(at))
  if (rest === null) return 'the target has a %-escape that is not UTF-8'
  out.push(rest)
  return out.filter((piece) => piece !== '')
}

function compileTarget(to: string, pattern: PathPattern, rewrite: boolean): Target | string {
  let origin = ''
  let rest = to
  if (HTTP_URL.test(to)) {
    if (rewrite) return `a ${JSON.stringify(to)} target needs a redirect status: 200 and 404 serve a path of this site (Plinth never proxies another site)`
    const hostAt = to.indexOf('//') + 2
    const hostEnd = to.slice(hostAt).search(/[/?#]/)
    const end = hostEnd === -1 ? to.length : hostAt + hostEnd
    const authority = to.slice(hostAt, end)
    if (/:[A-Za-z_]|\*/.test(authority)) return `${JSON.stringify(to)} has a placeholder in its host: placeholders may fill the path, query or fragment only`
    if (authority.includes('@')) return `${JSON.stringify(to)} has a user name before its host, which only serves to disguise where it leads`
    try {
      origin = new URL(to.slice(0, end)).origin
    } catch {
      return `${JSON.stringify(to)} is not a valid URL`
    }
    if (origin === 'null' || authority === '') return `${JSON.stringify(to)} is not a valid URL`
    rest = to.slice(end).startsWith('/') ? to.slice(end) : `/${to.slice(end)}`
  } else if (!to.startsWith('/')) {
    return `the target ${JSON.stringify(to)} is neither a path nor an http(s) URL`
  } else if (/^\/[/\\]/.test(to)) {
    return `${JSON.stringify(to)} starts with "//", which browsers read as another host: write one "/" for a path, or https://host/... for another site`
  }
  if (to.includes('\\')) return `${JSON.stringify(to)} contains a backslash, which browsers read as "/"`
  if (BAD_PERCENT.test(to)) return `${JSON.stringify(to)} has a "%" that is not a %XX escape`
  const hash = rest.indexOf('#')
  const beforeHash = hash === -1 ? rest : rest.slice(0, hash)
  const q = beforeHash.indexOf('?')
  const path = pieces(q === -1 ? beforeHash : beforeHash.slice(0, q), pattern, rewrite)
  const query = q === -1 ? null : pieces(beforeHash.slice(q), pattern, false)
  const fragment = hash === -1 || rewrite ? null : pieces(rest.slice(hash), pattern, false)
  for (const part of [path, query, fragment]) if (typeof part === 'string') return part
  return { origin, path: path as Piece[], query: query as Piece[] | null, fragment: fragment as Piece[] | null }
}

/** A decoded path (or a value captured from one) as a URL path: escaped, but "/" and the characters paths allow kept. */
export const pathValue = (value: string): string => encodeURI(value).replace(/[?#]/g, encodeURIComponent)

function fill(parts: Piece[], captures: string[], encode: ((value: string) => string) | null): string {
  let out = ''
  for (const part of parts) out += typeof part === 'string' ? part : encode === null ? captures[part]! : encode(captures[part]!)
  return out
}

function answer(rule: RedirectRule, captures: string[], pathname: string, search: string): RedirectMatch | null {
  const { target, status } = rule
  try {
    const query = target.query === null ? search : fill(target.query, captures, encodeURIComponent)
    if (status === 200 || status === 404) return { status, rewritePath: fill(target.path, captures, null).replace(/\/{2,}/g, '/'), search: query }
    let path = fill(target.path, captures, pathValue)
    // A path of the site never starts "//" (another host to browsers), whatever a splat held.
    if (target.origin === '') path = path.replace(/\/{2,}/g, '/')
    // A redirect to the very URL requested would loop (`/a /a/ 301` once normalised): the rule is skipped.
    if (target.origin === '' && query === search && decodeText(path) === pathname) return null
    const fragment = target.fragment === null ? '' : fill(target.fragment, captures, encodeURIComponent)
    return { status, location: target.origin + path + query + fragment }
  } catch {
    return null // a capture with a lone surrogate cannot be %-encoded: there is nowhere to send it
  }
}

/**
 * The answer of the first rule matching a decoded path (`search` is the raw query, '' or "?...").
 * `fileExists`: a file (or a folder's redirect) answers this path, so only forced rules apply. Null: serve as usual.
 */
export function matchRedirect(rules: RedirectRules, pathname: string, search: string, fileExists = false): RedirectMatch | null {
  if (rules.list.length === 0 || (fileExists && !rules.forced)) return null
  const path = requestPath(pathname)
  if (path === null) return null
  const captures: string[] = []
  for (const rule of rules.list) {
    if ((fileExists && !rule.force) || !matchPattern(rule.pattern, path, captures)) continue
    const found = answer(rule, captures, pathname, search)
    if (found !== null) return found
  }
  return null
}

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])
const STATUS_TOKEN = /^(\d{3})(!?)$/

/** One rule line (comment and blank lines excluded): the rule, or what is wrong with it. */
function parseRule(text: string, line: number): RedirectRule | string {
  let tokens = text.trim().split(/[ \t]+/)
  const comment = tokens.findIndex((token, i) => i > 0 && token.startsWith('#'))
  if (comment !== -1) tokens = tokens.slice(0, comment)
  const [from, to, statusToken = '301', ...more] = tokens as [string, string | undefined, string | undefined, ...string[]]
  if (to === undefined || STATUS_TOKEN.test(to))
    return 'it has no target: write "from to [status]", e.g. "/old /new 301" (the form without a target, "/app/* 200", is not supported: write "/app/* /app/:splat 200")'
  if (!to.startsWith('/') && !HAS_SCHEME.test(to) && to.includes('='))
    return `it matches on the query parameter ${JSON.stringify(to)}, which Plinth does not support: rules match on the path alone, and the request's query string is passed on to the target`
  if (more.length > 0)
    return more.some((token) => /^[A-Za-z]+=/.test(token))
      ? `it has the condition ${JSON.stringify(more[0])}: conditions (Country=, Language=, Role=, Cookie=) are not supported`
      : `it has ${tokens.length} fields: write "from to [status]" (start a comment with " #")`
  if (!to.startsWith('/') && !HAS_SCHEME.test(to))
    return `the target ${JSON.stringify(to)} does not start with "/": write the path from the site root (e.g. "/new-page") or an https:// URL`
  if (HTTP_URL.test(from)) return `${JSON.stringify(from)} is a full URL: domain-level rules are not supported, "from" is a path of the site (e.g. "/blog/*")`
  const status = STATUS_TOKEN.exec(statusToken)
  const code = status === null ? NaN : Number(status[1])
  if (!REDIRECT_STATUSES.has(code) && code !== 200 && code !== 404)
    return `${JSON.stringify(statusToken)} is not a status Plinth supports: 301 (the default), 302, 303, 307 or 308 redirect; 200 rewrites; 404 serves the target as not found`
  const pattern = compilePattern(from)
  if (typeof pattern === 'string') return pattern
  const target = compileTarget(to, pattern, !REDIRECT_STATUSES.has(code))
  if (typeof target === 'string') return target
  return { line, from, to, status: code as RedirectStatus | RewriteStatus, force: status![2] === '!', pattern, target }
}

/** Splits a rules file into lines, without a byte order mark, whatever its line endings. */
export function fileLines(text: string): string[] {
  return (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split(/\r\n|\r|\n/)
}

/** Why a line cannot be read at all (too long, control characters), or null. */
export function lineProblem(text: string, maxChars: number): string | null {
  if (text.length > maxChars) return `the line is ${text.length} characters long, more than the ${maxChars} allowed`
  if (CONTROL.test(text)) return 'the line contains a control character (such as NUL): only spaces and tabs may separate fields'
  if (!isWellFormed(text)) return 'the line contains an unpaired UTF-16 surrogate (not valid Unicode)'
  return null
}

export function ruleViolation(code: string, path: string, line: number, text: string, problem: string): RuleViolation {
  return { code, path, line, detail: `line ${line}: ${snippet(text)}`, message: `${path}, line ${line}: ${problem}.` }
}

/** Parses and checks `_redirects`. Publish only when `violations` is empty. */
export function parseRedirects(text: string): { rules: RedirectRules; violations: RuleViolation[] } {
  const list: RedirectRule[] = []
  const violations: RuleViolation[] = []
  const lines = fileLines(text)
  for (let i = 0; i < lines.length && violations.length < MAX_RULE_VIOLATIONS; i++) {
    const raw = lines[i]!
    const trimmed = raw.trim()
    if (trimmed === '' || trimmed.startsWith('#')) continue
    const fail = (problem: string) => violations.push(ruleViolation(INVALID_REDIRECTS, REDIRECTS_FILE, i + 1, raw, problem))
    if (list.length + violations.length >= MAX_REDIRECT_RULES) {
      fail(`the file has more than ${MAX_REDIRECT_RULES} rules: use splats ("/blog/*") and placeholders ("/posts/:slug") to cover many paths with one rule`)
      break
    }
    const problem = lineProblem(raw, MAX_REDIRECT_LINE_CHARS)
    const rule = problem ?? parseRule(raw, i + 1)
    if (typeof rule === 'string') fail(rule)
    else list.push(rule)
  }
  return { rules: { list, forced: list.some((rule) => rule.force) }, violations }
}
