/**
 * The web site's static files (one stylesheet, the page script, the icon, and the drop area's
 * modules), read once, and the content tags pages link them with. The drop area's script imports
 * the skip rules the deploy command runs (core/folder-skips.js) and the `ignore` package that
 * reads a `.plinthignore`, served as they are (the package's CommonJS wrapped as a module); its
 * imports are rewritten to their tagged URLs, so a cached script never loads stale rules.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

export interface StaticAsset {
  body: string
  type: string
}

export interface WebAssets {
  files: Record<string, StaticAsset>
  /** What each page appends to an asset's URL (`/assets/plinth.css?v=...`). */
  tags: { css: string; js: string; icon: string; deploy: string }
}

/** A short, stable version tag for an asset URL, so it can be cached for good. */
export const contentTag = (bytes: string | Buffer): string => createHash('sha256').update(bytes).digest('base64url').slice(0, 10)

const JS = 'text/javascript; charset=utf-8'
const read = (url: URL): string => readFileSync(url, 'utf8')
const asset = (file: string, type: string): StaticAsset => ({ body: read(new URL(`./assets/${file}`, import.meta.url)), type })

/** The `ignore` package's one CommonJS file as an ES module whose default export is its factory. */
function ignoreModule(): StaticAsset {
  const source = readFileSync(createRequire(import.meta.url).resolve('ignore'), 'utf8')
  return { body: `const module = { exports: {} };\n${source}\nexport default module.exports;\n`, type: JS }
}

let loaded: WebAssets | undefined

export function webAssets(): WebAssets {
  if (loaded) return loaded
  const css = asset('plinth.css', 'text/css; charset=utf-8')
  const js = asset('plinth.js', JS)
  const icon = asset('favicon.svg', 'image/svg+xml')
  const skips: StaticAsset = { body: read(new URL('../core/folder-skips.js', import.meta.url)), type: JS }
  const ignore = ignoreModule()
  const deploySource = asset('deploy.js', JS)
  const deploy: StaticAsset = {
    ...deploySource,
    body: deploySource.body
      .replace("from './folder-skips.js'", `from './folder-skips.js?v=${contentTag(skips.body)}'`)
      .replace("from './ignore.js'", `from './ignore.js?v=${contentTag(ignore.body)}'`),
  }
  loaded = {
    files: { 'plinth.css': css, 'plinth.js': js, 'favicon.svg': icon, 'deploy.js': deploy, 'folder-skips.js': skips, 'ignore.js': ignore },
    tags: { css: contentTag(css.body), js: contentTag(js.body), icon: contentTag(icon.body), deploy: contentTag(deploy.body) },
  }
  return loaded
}
