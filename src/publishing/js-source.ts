/**
 * Reading JavaScript source without parsing it, for the rules of js-rules.ts: string and template
 * literals, and a copy of the source with its comments blanked out (strings, template literals
 * and, heuristically, regex literals understood), offsets unchanged.
 */

/**
 * Reads a JS string or template literal starting at `pos` (after optional whitespace). For a
 * template literal with substitutions, `value` is the static text before the first `${`.
 */
export function readStringLiteral(text: string, pos: number): { value: string; end: number } | undefined {
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
export function isSpace(c: number): boolean {
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
export function stripJsComments(source: string): string {
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
