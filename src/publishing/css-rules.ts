/**
 * Authoring rules for CSS (.css files and <style> elements): an `@import` of a stylesheet outside
 * the bundle is EXTERNAL_URL.
 *
 * Uses css-tree's tokenizer rather than its parser: it never fails, decodes escapes the way
 * browsers do (`@\69mport`, `"\68ttps://..."`), and finds every `@import` wherever it appears,
 * even inside blocks or after a syntax error (browsers would ignore some of those; flagging them
 * anyway is harmless). Other `url(...)` references (images, fonts) are allowed; a plain `http:`
 * one is reported as MIXED_CONTENT, a warning that counts only on an https site.
 */

// css-tree's tokenizer and value helpers alone: its main entry also builds the CSS lexer from its
// syntax data as it loads, which the rules never use and which would lengthen every start of a
// process or content-scan thread (docs/benchmarks.md#what-the-design-rests-on).
import { tokenize, tokenTypes } from 'css-tree/tokenizer'
import { ident, string as cssString, url as cssUrl } from 'css-tree/utils'
import { type Emit, isExternalUrl, isPlainHttpUrl, snippet } from './bundle-paths.ts'

/**
 * `where` names the stylesheet as the subject that starts a message, as it is to be shown: a file's
 * path exactly as given ("css/Site.css"), or a phrase ("A <style> element in index.html").
 */
export function scanCss(css: string, path: string, where: string, emit: Emit): void {
  if (/http:/i.test(css)) {
    for (const target of cssUrls(css)) {
      if (!isPlainHttpUrl(target)) continue
      const detail = snippet(target)
      emit({
        code: 'MIXED_CONTENT',
        path,
        detail,
        message: `${where} loads ${detail} over plain http; on an https site browsers upgrade such requests to https or block them (fonts are blocked): use an https URL or put the file in the bundle.`,
      })
    }
  }
  if (!css.includes('@')) return
  for (const target of cssImports(css)) {
    if (!isExternalUrl(target)) continue
    const detail = snippet(target)
    emit({
      code: 'EXTERNAL_URL',
      path,
      detail,
      message: `${where} imports the stylesheet ${detail} with @import; external stylesheets are not allowed: copy the stylesheet into the bundle and @import it by a relative path. For web fonts (e.g. Google Fonts), put the font files in the bundle and declare them with @font-face.`,
    })
  }
}

/** Every `url(...)` target in the stylesheet (images, fonts, imports), in source order. */
function cssUrls(css: string): string[] {
  const targets: string[] = []
  let inUrlFunction = false
  tokenize(css, (type, start, end) => {
    if (type === tokenTypes.WhiteSpace || type === tokenTypes.Comment) return
    const text = css.slice(start, end)
    if (inUrlFunction && type === tokenTypes.String) targets.push(cssString.decode(text))
    inUrlFunction = type === tokenTypes.Function && ident.decode(text.slice(0, -1)).toLowerCase() === 'url'
    if (type === tokenTypes.Url) targets.push(cssUrl.decode(text))
  })
  return targets
}

/** The target URL of every `@import` in the stylesheet, in source order. */
function cssImports(css: string): string[] {
  const targets: string[] = []
  // 0: looking for @import; 1: after @import; 2: after @import url(
  let state = 0
  tokenize(css, (type, start, end) => {
    if (type === tokenTypes.WhiteSpace || type === tokenTypes.Comment) return
    if (state === 0 && type !== tokenTypes.AtKeyword) return
    const text = css.slice(start, end)
    if (state === 1) {
      state = 0
      if (type === tokenTypes.String) targets.push(cssString.decode(text))
      else if (type === tokenTypes.Url) targets.push(cssUrl.decode(text))
      else if (type === tokenTypes.Function && ident.decode(text.slice(0, -1)).toLowerCase() === 'url') state = 2
    } else if (state === 2) {
      state = 0
      if (type === tokenTypes.String) targets.push(cssString.decode(text))
    }
    if (state === 0 && type === tokenTypes.AtKeyword && ident.decode(text.slice(1)).toLowerCase() === 'import') state = 1
  })
  return targets
}
