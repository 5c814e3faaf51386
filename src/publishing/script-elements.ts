/**
 * The authoring rules of <script> elements (html-rules.ts): an external src, an import map
 * mapping to external URLs, and the rules of JavaScript (js-rules.ts) on inline code, by the kind
 * of script its type attribute makes it.
 */
import type { FactSink } from '../site-check/file-facts.ts'
import { quoted } from '../core/text.ts'
import { type Emit, isExternalUrl, snippet } from './bundle-paths.ts'
import { JS_CONTENT_TYPES, scanJs } from './js-rules.ts'

// Data-block types that in-page transpilers (Babel standalone and friends) execute anyway.
const TRANSPILED_SCRIPT = /babel|jsx|typescript/

type ScriptKind = 'classic' | 'module' | 'importmap' | 'data'
type Attrs = Map<string, string>

export function checkScriptSrc(attrs: Attrs, path: string, emit: Emit): void {
  for (const name of ['src', 'href']) {
    const url = attrs.get(name)
    if (url === undefined || !isExternalUrl(url)) continue
    const detail = snippet(url)
    emit({
      code: 'EXTERNAL_URL',
      path,
      detail,
      message: `${path} loads the script ${detail} from outside the bundle; external scripts are not allowed: copy the file into the bundle and reference it by a relative path (e.g. <script src="js/app.js">).`,
    })
  }
}

export function checkScriptText(code: string, attrs: Attrs, path: string, emit: Emit, facts?: FactSink): void {
  if (code.trim() === '') return
  const kind = scriptKind(attrs)
  if (kind === 'importmap') {
    checkImportMap(code, path, emit)
    return
  }
  if (kind === 'data') return
  scanJs(code, path, `An inline <script${kind === 'module' ? ' type="module"' : ''}> in ${path}`, emit, facts)
}

function scriptKind(attrs: Attrs): ScriptKind {
  const type = attrs.get('type')
  if (type === undefined) return 'classic' // (a legacy language="..." attribute is treated as JavaScript too)
  const t = type.trim().toLowerCase()
  // MIME parameters are ignored, which is more conservative than browsers (they treat
  // "text/javascript;charset=x" as an inert data block).
  if (t === '' || JS_CONTENT_TYPES.has(t.split(';')[0]!.trim())) return 'classic'
  if (t === 'module') return 'module'
  if (t === 'importmap') return 'importmap'
  return TRANSPILED_SCRIPT.test(t) ? 'classic' : 'data'
}

function checkImportMap(json: string, path: string, emit: Emit): void {
  let map: unknown
  try {
    map = JSON.parse(json)
  } catch {
    return // browsers ignore an import map that is not valid JSON
  }
  if (!isObject(map)) return
  const tables = [map.imports, ...(isObject(map.scopes) ? Object.values(map.scopes) : [])]
  for (const table of tables) {
    if (!isObject(table)) continue
    for (const [specifier, target] of Object.entries(table)) {
      if (typeof target !== 'string' || !isExternalUrl(target)) continue
      const detail = snippet(target)
      emit({
        code: 'EXTERNAL_URL',
        path,
        detail,
        message: `The import map in ${path} maps ${quoted(specifier)} to ${detail}; modules from outside the bundle are not allowed: copy the module into the bundle and map it to a relative path (e.g. "./vendor/module.js").`,
      })
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
