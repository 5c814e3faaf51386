/** The web site's static files (one stylesheet, one script, the icon), read once, and the content tags pages link them with. */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'

export interface StaticAsset {
  body: string
  type: string
}

export interface WebAssets {
  files: Record<string, StaticAsset>
  /** What each page appends to an asset's URL (`/assets/plinth.css?v=...`). */
  tags: { css: string; js: string; icon: string }
}

/** A short, stable version tag for an asset URL, so it can be cached for good. */
export const contentTag = (bytes: string | Buffer): string => createHash('sha256').update(bytes).digest('base64url').slice(0, 10)

const asset = (file: string, type: string): StaticAsset => ({ body: readFileSync(new URL(`./assets/${file}`, import.meta.url), 'utf8'), type })

let loaded: WebAssets | undefined

export function webAssets(): WebAssets {
  if (loaded) return loaded
  const css = asset('plinth.css', 'text/css; charset=utf-8')
  const js = asset('plinth.js', 'text/javascript; charset=utf-8')
  const icon = asset('favicon.svg', 'image/svg+xml')
  loaded = {
    files: { 'plinth.css': css, 'plinth.js': js, 'favicon.svg': icon },
    tags: { css: contentTag(css.body), js: contentTag(js.body), icon: contentTag(icon.body) },
  }
  return loaded
}
