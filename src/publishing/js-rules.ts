/**
 * Authoring rules for JavaScript: .js/.mjs files, inline <script> elements, event-handler
 * attributes and javascript: URLs.
 *
 * - EXTERNAL_URL: static `import ... from`, `export ... from`, side-effect `import '...'` and
 *   dynamic `import(...)` of an external URL (es-module-lexer; a dynamic import whose argument is
 *   not a plain literal is checked by its leading string/template literal, so
 *   `import('https://cdn/' + name)` is caught), and `importScripts(...)` string arguments.
 * - SERVICE_WORKER: `serviceWorker.register`, `serviceWorker['register']`, `serviceWorker?.register`
 *   and any `navigator['serviceWorker']` access.
 * - UNSAFE_EVAL (a warning, not a violation): code compiled from a string, which the site's
 *   Content-Security-Policy refuses unless its script-src has 'unsafe-eval' (core/site-policy.ts;
 *   the warning follows the policy served): `eval(...)` also as `window.eval`, `globalThis.eval`,
 *   `self.eval` or `(0, eval)`; `Function(...)` with or without `new`, and the async and generator
 *   function constructors, called by name or reached as
 *   `Object.getPrototypeOf(async function () {}).constructor` (as Alpine.js does); and a string
 *   given as the code of `setTimeout` or `setInterval`.
 *
 * Comments: es-module-lexer ignores comments by itself. The regex-based checks (importScripts,
 * service workers, and the import fallback used when the lexer cannot parse the source) run on a
 * copy of the source with comments blanked out by a small lexer that understands strings, template
 * literals and (heuristically) regex literals, so commented-out boilerplate such as
 * `// navigator.serviceWorker.register('/sw.js')` is not flagged. The heuristic can be fooled by
 * deliberately contorted code; these rules catch honest mistakes, they are not a sandbox (the
 * serving layer's Content-Security-Policy is the real enforcement).
 */

import { initSync, parse as lexModule } from 'es-module-lexer'
import type { PublishViolation } from '../core/errors.ts'
import { SCRIPT_SOURCES, SITE_POLICY_ALLOWS_EVAL } from '../core/site-policy.ts'
import { type Emit, isExternalUrl, snippet } from './bundle-paths.ts'

initSync()

/** Content types browsers execute as JavaScript (RFC 9239 plus the legacy aliases browsers accept). */
export const JS_CONTENT_TYPES: ReadonlySet<string> = new Set([
  'text/javascript',
  'application/javascript',
  'application/ecmascript',
  'application/x-ecmascript',
  'application/x-javascript',
  'text/ecmascript',
  'text/jscript',
  'text/livescript',
  'text/x-ecmascript',
  'text/x-javascript',
  ...[0, 1, 2, 3, 4, 5].map((minor) => `text/javascript1.${minor}`),
])

interface Finding {
  at: number
  kind: 'import' | 'importScripts' | 'serviceWorker' | 'eval'
  text: string
}

/**
 * Checks JavaScript source. `where` names it as the subject that starts a message, as it is to be
 * shown: a file's path exactly as given ("js/App.js"), or a phrase ("An inline <script> in
 * index.html"); `path` is the bundle file the violations belong to.
 */
export function scanJs(source: string, path: string, where: string, emit: Emit): void {
  const hasImport = source.includes('import') || source.includes('export') // `export ... from` too
  const hasSw = source.includes('serviceWorker')
  const hasEval = mayCompileStrings(source)
  if (!hasImport && !hasSw && !hasEval) return
  const findings: Finding[] = []
  let stripped: string | undefined
  const code = (): string => (stripped ??= stripJsComments(source))
  if (hasImport) findImports(source, code, findings)
  if (source.includes('importScripts')) findImportScripts(code(), findings)
  if (hasSw) findServiceWorkers(code(), findings)
  if (hasEval) findEval(code(), findings)
  findings.sort((a, b) => a.at - b.at)
  for (const f of findings) emit(toViolation(f, path, where))
}

const MESSAGES: Record<Finding['kind'], (where: string, detail: string) => string> = {
  import: (where, detail) =>
    `${where} imports the module ${detail}; modules from outside the bundle are not allowed: copy the module (and everything it imports) into the bundle and import it by a relative path such as "./vendor/module.js".`,
  importScripts: (where, detail) =>
    `${where} loads the script ${detail} with importScripts(); external scripts are not allowed: copy the file into the bundle and load it by a relative path.`,
  serviceWorker: (where, detail) =>
    `${where} registers a service worker (${detail}); service workers are not allowed on published sites: remove the registration code.`,
  eval: (where, detail) =>
    `${where} compiles a string into code with ${detail}; the site's Content-Security-Policy (script-src ${SCRIPT_SOURCES}) does not allow 'unsafe-eval', so browsers refuse to run it. Use JSON.parse for data and functions for code (pass a function, not a string, to setTimeout and setInterval). A library that compiles templates in the browser has a build that does not: Alpine.js's CSP build (@alpinejs/csp), Vue's runtime-only build (vue.runtime.esm-browser.prod.js, with templates compiled at build time, as Vite's @vitejs/plugin-vue does).`,
}

const KIND_CODES: Record<Finding['kind'], string> = {
  import: 'EXTERNAL_URL',
  importScripts: 'EXTERNAL_URL',
  serviceWorker: 'SERVICE_WORKER',
  eval: 'UNSAFE_EVAL',
}

// Quotes are matched loosely (any of ' " ` on either side): mismatched quotes are not valid JS anyway.
const QUOTE = '[\'"`]'

/**
 * Every spelling of compiling a string into code, each alternative a group: eval (called directly,
 * through the global object or indirectly), the Function constructors, how the async and
 * generator ones are reached, and a timer given a string. `math.eval(`, `evaluate(`,
 * `isFunction(` and `obj.setTimeout(` are not matched.
 */
const STRING_TO_CODE = new RegExp(
  [
    String.raw`(?<![.\w$])(?:(?:window|globalThis|self)\s*(?:\?\.\s*)?(?:\.\s*eval|\[\s*${QUOTE}eval${QUOTE}\s*\])|eval)\s*\(`,
    String.raw`\(\s*0\s*,\s*eval\s*\)\s*\(`,
    String.raw`(?<![.\w$])(?:new\s+)?(?:Async)?(?:Generator)?Function\s*\(`,
    String.raw`\bgetPrototypeOf\s*\(\s*(?:async\b|function\s*\*)`,
    String.raw`(?<![.\w$])(?:(?:window|globalThis|self)\s*\.\s*)?(?:setTimeout|setInterval)\s*\(\s*(?=${QUOTE})`,
  ]
    .map((alternative) => `(${alternative})`)
    .join('|'),
  'g',
)

/** Whether `text` may hold code compiled from a string (a cheap test before STRING_TO_CODE). */
export function mayCompileStrings(text: string): boolean {
  if (SITE_POLICY_ALLOWS_EVAL) return false
  return text.includes('eval') || text.includes('Function') || text.includes('setTimeout') || text.includes('setInterval') || text.includes('getPrototypeOf')
}

/** `Function('return this')()`: the global object in code that also runs outside browsers, a fallback browsers never reach. */
const GLOBAL_OBJECT_IDIOM = 'return this'

function findEval(code: string, out: Finding[]): void {
  for (const m of code.matchAll(STRING_TO_CODE)) {
    if (m[3] !== undefined && readStringLiteral(code, m.index + m[0].length)?.value === GLOBAL_OBJECT_IDIOM) continue
    const spelled = m[0].replace(/\s+/g, ' ')
    let text: string
    if (m[4] !== undefined) text = `${spelled.replace(/ \*$/, '*')} …).constructor`
    else if (m[5] !== undefined) text = spelled.replace(/\( ?$/, '() given a string')
    else text = spelled.replace(/\($/, '()')
    out.push({ at: m.index, kind: 'eval', text })
  }
}

function toViolation(f: Finding, path: string, where: string): PublishViolation {
  const detail = snippet(f.text)
  return { code: KIND_CODES[f.kind], path, detail, message: MESSAGES[f.kind](where, detail) }
}

function findImports(source: string, code: () => string, out: Finding[]): void {
  let imports: ReturnType<typeof lexModule>[0] | undefined
  try {
    imports = lexModule(source)[0]
  } catch {
    imports = undefined
  }
  if (!imports) {
    findImportsByRegex(code(), out)
    return
  }
  for (const imp of imports) {
    if (imp.d === -2) continue // import.meta
    const spec = imp.n ?? readStringLiteral(source.slice(imp.s, imp.e), 0)?.value
    if (spec !== undefined && isExternalUrl(spec)) out.push({ at: imp.s, kind: 'import', text: spec })
  }
}

// Conservative fallback when es-module-lexer rejects the source: `import(`, `import '...'` and
// `from '...'` followed by a string literal.
const IMPORT_FALLBACK = /\bimport\s*\(\s*|\b(?:from|import)\s*(?=['"`])/g

function findImportsByRegex(code: string, out: Finding[]): void {
  for (const m of code.matchAll(IMPORT_FALLBACK)) {
    const lit = readStringLiteral(code, m.index + m[0].length)
    if (lit && isExternalUrl(lit.value)) out.push({ at: m.index, kind: 'import', text: lit.value })
  }
}

const IMPORT_SCRIPTS = /\bimportScripts\s*\(/g

function findImportScripts(code: string, out: Finding[]): void {
  for (const m of code.matchAll(IMPORT_SCRIPTS)) {
    let pos = m.index + m[0].length
    for (;;) {
      const lit = readStringLiteral(code, pos)
      if (!lit) break
      if (isExternalUrl(lit.value)) out.push({ at: m.index, kind: 'importScripts', text: lit.value })
      pos = lit.end
      while (pos < code.length && isSpace(code.charCodeAt(pos))) pos++
      if (code[pos] !== ',') break
      pos++
    }
  }
}

const BRACKET_REGISTER = String.raw`\[\s*${QUOTE}register${QUOTE}\s*\]`
// .register  ?.register  ['register']  ?.['register']
const ACCESSOR = String.raw`\s*(?:\?\.\s*(?:register\b|${BRACKET_REGISTER})|\.\s*register\b|${BRACKET_REGISTER})`
const SERVICE_WORKER = new RegExp(String.raw`\bnavigator\s*(?:\?\.\s*)?\[\s*${QUOTE}serviceWorker${QUOTE}\s*\](?:${ACCESSOR})?|\bserviceWorker${ACCESSOR}`, 'g')

function findServiceWorkers(code: string, out: Finding[]): void {
  for (const m of code.matchAll(SERVICE_WORKER)) {
    // Detail: "navigator." before the match (when present) and the call's arguments after it.
    const lead = /navigator\s*\??\.\s*$/.exec(code.slice(Math.max(0, m.index - 16), m.index))?.[0] ?? ''
    const after = m.index + m[0].length
    const call = /^\s*\([^)\n]{0,100}\)?/.exec(code.slice(after, after + 120))?.[0] ?? ''
    out.push({ at: m.index, kind: 'serviceWorker', text: lead + m[0] + call })
  }
}

/**
 * Reads a JS string or template literal starting at `pos` (after optional whitespace). For a
 * template literal with substitutions, `value` is the static text before the first `${`.
 */
function readStringLiteral(text: string, pos: number): { value: string; end: number } | undefined {
  while (pos < text.length && isSpace(text.charCodeAt(pos))) pos++
  const quote = text[pos]
  if (quote !== '"' && quote !== "'" && quote !== '`') return undefined
  for (let i = pos + 1; i < text.length; i++) {
    const ch = text[i]
    if (ch === '\\') i++
    else if (ch === quote) return { value: unescapeJs(text.slice(pos + 1, i)), end: i + 1 }
    else if (quote === '`' && ch === '$' && text[i + 1] === '{') return { value: unescapeJs(text.slice(pos + 1, i)), end: i }
    else if (quote !== '`' && (ch === '\n' || ch === '\r')) return undefined
  }
  return undefined
}

// Whitespace and line terminators (ASCII plus the common Unicode ones).
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0xfeff || c === 0x2028 || c === 0x2029
}

function isIdentChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', 0: '\0' }

function unescapeJs(raw: string): string {
  if (!raw.includes('\\')) return raw
  return raw.replace(
    /\\(?:x([0-9a-fA-F]{2})|u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|\r\n|[\n\r\u2028\u2029]|(.))/gs,
    (_whole, hex2: string | undefined, hexBrace: string | undefined, hex4: string | undefined, other: string | undefined) => {
      const hex = hex2 ?? hexBrace ?? hex4
      if (hex !== undefined) {
        const cp = parseInt(hex, 16)
        return cp <= 0x10ffff ? String.fromCodePoint(cp) : ''
      }
      if (other === undefined) return '' // line continuation
      return SIMPLE_ESCAPES[other] ?? other
    },
  )
}

// After these keywords a "/" starts a regex literal, not a division.
const KEYWORDS_BEFORE_EXPRESSION = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
])
const REGEX_AFTER = new Set([...'(,=:[!&|?{};+-*%<>~^'])

/** Returns `source` with comments replaced by spaces (newlines kept, offsets unchanged). */
function stripJsComments(source: string): string {
  if (!source.includes('/')) return source
  const n = source.length
  const parts: string[] = []
  let copied = 0
  let prev = '' // last significant token: a punctuator, '' at the start, 'x' for a value, 'kw' for a keyword
  let depth = 0
  let noRegexUntil = 0
  const substitutions: number[] = [] // brace depth at which each open template `${` started
  let i = 0
  const blank = (start: number, end: number) => {
    parts.push(source.slice(copied, start), source.slice(start, end).replace(/[^\n]/g, ' '))
    copied = end
  }
  // Scans template text from `from`; stops after the closing backtick or inside a `${`.
  const scanTemplate = (from: number) => {
    for (let j = from; j < n; j++) {
      const ch = source[j]
      if (ch === '\\') j++
      else if (ch === '`') {
        i = j + 1
        prev = 'x'
        return
      } else if (ch === '$' && source[j + 1] === '{') {
        substitutions.push(depth)
        i = j + 2
        prev = '('
        return
      }
    }
    i = n
  }
  while (i < n) {
    const ch = source[i]!
    const c = source.charCodeAt(i)
    if (ch === '/') {
      const next = source[i + 1]
      if (next === '/' || next === '*') {
        const close = next === '/' ? source.indexOf('\n', i) : source.indexOf('*/', i + 2)
        const end = close < 0 ? n : next === '/' ? close : close + 2
        blank(i, end)
        i = end
        continue
      }
      if (i >= noRegexUntil && (prev === '' || prev === 'kw' || REGEX_AFTER.has(prev))) {
        const end = skipRegex(source, i)
        if (end > 0) {
          i = end
          prev = 'x'
          continue
        }
        // Not a regex after all. Valid code never gets here (a regex literal closes on its own
        // line), so don't look for one again in the stretch just scanned: keeps "[/[/[/..." linear.
        noRegexUntil = -end
      }
      prev = '/'
      i++
    } else if (ch === '"' || ch === "'") {
      i = skipQuoted(source, i)
      prev = 'x'
    } else if (ch === '`') {
      scanTemplate(i + 1)
    } else if (ch === '{') {
      depth++
      prev = '{'
      i++
    } else if (ch === '}') {
      if (substitutions.length > 0 && substitutions[substitutions.length - 1] === depth) {
        substitutions.pop()
        scanTemplate(i + 1)
      } else {
        depth--
        prev = '}'
        i++
      }
    } else if (isSpace(c)) {
      i++
    } else if (isIdentChar(c)) {
      let j = i + 1
      while (j < n && isIdentChar(source.charCodeAt(j))) j++
      prev = KEYWORDS_BEFORE_EXPRESSION.has(source.slice(i, j)) ? 'kw' : 'x'
      i = j
    } else {
      prev = ch
      i++
    }
  }
  if (copied === 0) return source
  parts.push(source.slice(copied))
  return parts.join('')
}

function skipQuoted(source: string, start: number): number {
  const quote = source[start]
  for (let j = start + 1; j < source.length; j++) {
    const ch = source[j]
    if (ch === '\\') j++
    else if (ch === quote) return j + 1
    else if (ch === '\n') return j
  }
  return source.length
}

/** End of the regex literal starting at `start`; if there is none on this line, minus where the scan stopped. */
function skipRegex(source: string, start: number): number {
  let inClass = false
  let j = start + 1
  for (; j < source.length; j++) {
    const ch = source[j]
    if (ch === '\n' || ch === '\r') break
    if (ch === '\\') j++
    else if (ch === '[') inClass = true
    else if (ch === ']') inClass = false
    else if (ch === '/' && !inClass) {
      let k = j + 1
      while (k < source.length && isIdentChar(source.charCodeAt(k))) k++
      return k
    }
  }
  return -j
}
