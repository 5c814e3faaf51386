/**
 * Authoring rules for CSS (.css files and <style> elements): an `@import` of a stylesheet outside
 * the bundle is EXTERNAL_URL.
 *
 * Uses css-tree's tokenizer rather than its parser: it never fails, decodes escapes the way
 * browsers do (`@\69mport`, `"\68ttps://..."`), and finds every `@import` wherever it appears,
 * even inside blocks or after a syntax error (browsers would ignore some of those; flagging them
 * anyway is harmless). Other `url(...)` references (images, fonts) are allowed; a plain `http:`
 * one is reported as MIXED_CONTENT, a warning that counts only on an https site. The same single
 * pass gives the site check every address the stylesheet names (site-check/file-facts.ts).
 */

// css-tree's tokenizer and value helpers alone: its main entry also builds the CSS lexer from its
// syntax data as it loads, which the rules never use and which would lengthen every start of a
// process or content-scan thread (docs/benchmarks.md#what-the-design-rests-on).
import { tokenize, tokenTypes } from 'css-tree/tokenizer'
import { ident, string as cssString, url as cssUrl } from 'css-tree/utils'
import { type FactSink, LineCounter } from '../site-check/file-facts.ts'
import { type Emit, isExternalUrl, isPlainHttpUrl, snippet } from './bundle-paths.ts'

/** An address a stylesheet names: by `url(...)` (images, fonts) or by `@import`, at an offset of its text. */
export interface CssReference {
  url: string
  kind: 'url' | 'import'
  /** Written as `url(...)` (an @import may be). */
  viaUrl: boolean
  at: number
}

/**
 * `where` names the stylesheet as the subject that starts a message, as it is to be shown: a file's
 * path exactly as given ("css/Site.css"), or a phrase ("A <style> element in index.html").
 * Violations carry the `line` of the stylesheet they are on; `facts` takes the addresses it names.
 */
export function scanCss(css: string, path: string, where: string, emit: Emit, facts?: FactSink): void {
  // Without "(" there is no url(), and without "@" no @import (escapes spell neither character).
  if (!css.includes('(') && !css.includes('@')) return
  const lines = new LineCounter(css)
  for (const found of cssReferences(css)) {
    const line = lines.lineOf(found.at)
    facts?.reference(found.url, found.kind === 'import' ? 'stylesheet' : 'resource', line)
    if (found.viaUrl && isPlainHttpUrl(found.url)) {
      const detail = snippet(found.url)
      emit({
        code: 'MIXED_CONTENT',
        path,
        detail,
        line,
        message: `${where} loads ${detail} over plain http; on an https site browsers upgrade such requests to https or block them (fonts are blocked): use an https URL or put the file in the bundle.`,
      })
    }
    if (found.kind !== 'import' || !isExternalUrl(found.url)) continue
    const detail = snippet(found.url)
    emit({
      code: 'EXTERNAL_URL',
      path,
      detail,
      line,
      message: `${where} imports the stylesheet ${detail} with @import; external stylesheets are not allowed: copy the stylesheet into the bundle and @import it by a relative path. For web fonts (e.g. Google Fonts), put the font files in the bundle and declare them with @font-face.`,
    })
  }
}

/** Every address the stylesheet names, in source order: `url(...)` targets and `@import` targets (which are not also listed as urls). */
export function cssReferences(css: string): CssReference[] {
  const found: CssReference[] = []
  let inUrlFunction = false
  // Of @import: 0 looking for it; 1 after it; 2 after `@import url(`.
  let importState = 0
  tokenize(css, (type, start, end) => {
    if (type === tokenTypes.WhiteSpace || type === tokenTypes.Comment) return
    const text = css.slice(start, end)
    const after = importState
    importState = 0
    if (after === 1) {
      if (type === tokenTypes.String) found.push({ url: cssString.decode(text), kind: 'import', viaUrl: false, at: start })
      else if (type === tokenTypes.Url) found.push({ url: cssUrl.decode(text), kind: 'import', viaUrl: true, at: start })
      else if (type === tokenTypes.Function && ident.decode(text.slice(0, -1)).toLowerCase() === 'url') importState = 2
      inUrlFunction = false
      return
    }
    if (after === 2) {
      if (type === tokenTypes.String) found.push({ url: cssString.decode(text), kind: 'import', viaUrl: true, at: start })
      inUrlFunction = false
      return
    }
    if (inUrlFunction && type === tokenTypes.String) found.push({ url: cssString.decode(text), kind: 'url', viaUrl: true, at: start })
    inUrlFunction = type === tokenTypes.Function && ident.decode(text.slice(0, -1)).toLowerCase() === 'url'
    if (type === tokenTypes.Url) found.push({ url: cssUrl.decode(text), kind: 'url', viaUrl: true, at: start })
    if (type === tokenTypes.AtKeyword && ident.decode(text.slice(1)).toLowerCase() === 'import') importState = 1
  })
  return found
}
