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
 * - BLOCKED_BY_POLICY (a warning, not a violation): code compiled from a string, which the site's
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
 *
 * For the site check, the same pass gives the modules a script imports from the site and the
 * path-like strings it holds (site-check/file-facts.ts).
 */

import { initSync, parse as lexModule } from 'es-module-lexer'
import type { PublishViolation } from '../core/errors.ts'
import { SCRIPT_SOURCES, SITE_POLICY_ALLOWS_EVAL } from '../core/site-policy.ts'
import { type FactSink, LineCounter } from '../site-check/file-facts.ts'
import { type Emit, isExternalUrl, snippet } from './bundle-paths.ts'
import { isSpace, readStringLiteral, stripJsComments } from './js-source.ts'

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

/** A module the script imports from the site (a relative or root-relative specifier). */
interface LocalImport {
  at: number
  specifier: string
}

/** A string literal naming a file: plain path segments ending in an extension. */
const QUOTED_PATH = /(['"`])((?:\.{1,2}\/|\/)*[\w@~-][\w@~.-]*(?:\/[\w@~.-]+)*\.[A-Za-z0-9]{1,8})\1/g

/**
 * Checks JavaScript source. `where` names it as the subject that starts a message, as it is to be
 * shown: a file's path exactly as given ("js/App.js"), or a phrase ("An inline <script> in
 * index.html"); `path` is the bundle file the violations belong to. Violations carry their line in
 * the source; `facts` takes the modules it imports from the site and the paths it names.
 */
export function scanJs(source: string, path: string, where: string, emit: Emit, facts?: FactSink): void {
  if (facts) for (const m of source.matchAll(QUOTED_PATH)) facts.mention(m[2]!)
  const hasImport = source.includes('import') || source.includes('export') // `export ... from` too
  const hasSw = source.includes('serviceWorker')
  const hasEval = mayCompileStrings(source)
  if (!hasImport && !hasSw && !hasEval) return
  const findings: Finding[] = []
  const local: LocalImport[] = []
  let stripped: string | undefined
  const code = (): string => (stripped ??= stripJsComments(source))
  if (hasImport) findImports(source, code, findings, local)
  if (source.includes('importScripts')) findImportScripts(code(), findings)
  if (hasSw) findServiceWorkers(code(), findings)
  if (hasEval) findEval(code(), findings)
  const lines = new LineCounter(source)
  if (facts) for (const imp of local) facts.reference(imp.specifier, 'script', lines.lineOf(imp.at))
  findings.sort((a, b) => a.at - b.at)
  for (const f of findings) emit({ ...toViolation(f, path, where), line: lines.lineOf(f.at) })
}

/** Whether an import specifier names a module of the site: `./x.js`, `../x.js`, `/x.js` (bare names go through an import map). */
const isLocalSpecifier = (specifier: string): boolean => /^(?:\.{1,2})?\//.test(specifier)

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
  eval: 'BLOCKED_BY_POLICY',
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

function findImports(source: string, code: () => string, out: Finding[], local: LocalImport[]): void {
  let imports: ReturnType<typeof lexModule>[0] | undefined
  try {
    imports = lexModule(source)[0]
  } catch {
    imports = undefined
  }
  if (!imports) {
    findImportsByRegex(code(), out, local)
    return
  }
  for (const imp of imports) {
    if (imp.d === -2) continue // import.meta
    const spec = imp.n ?? readStringLiteral(source.slice(imp.s, imp.e), 0)?.value
    if (spec === undefined) continue
    if (isExternalUrl(spec)) out.push({ at: imp.s, kind: 'import', text: spec })
    // A dynamic import's literal is whole only when the lexer read it (imp.n).
    else if (imp.n !== undefined && isLocalSpecifier(spec)) local.push({ at: imp.s, specifier: spec })
  }
}

// Conservative fallback when es-module-lexer rejects the source: `import(`, `import '...'` and
// `from '...'` followed by a string literal.
const IMPORT_FALLBACK = /\bimport\s*\(\s*|\b(?:from|import)\s*(?=['"`])/g

function findImportsByRegex(code: string, out: Finding[], local: LocalImport[]): void {
  for (const m of code.matchAll(IMPORT_FALLBACK)) {
    const lit = readStringLiteral(code, m.index + m[0].length)
    if (!lit) continue
    if (isExternalUrl(lit.value)) out.push({ at: m.index, kind: 'import', text: lit.value })
    else if (isLocalSpecifier(lit.value) && !code.startsWith('${', lit.end)) local.push({ at: m.index, specifier: lit.value })
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
