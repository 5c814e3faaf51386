/**
 * What a page costs a visitor: PAGE_TOO_HEAVY, a page whose bytes and those of every file it
 * loads with it (images, stylesheets and what they load, scripts and the modules they import,
 * fonts, icons) are over PAGE_WEIGHT_LIMIT; and IMAGE_OVERSIZED, an image far larger than any
 * size the page shows it at, when every <img> of the page that shows it says a size in pixels
 * (width or height attributes). Sizes are the files' bytes as published (the server may send
 * text compressed); a srcset's other candidates and media (played on demand) are not counted.
 */
import type { Warning } from '../core/schemas.ts'
import type { ReferenceKind } from './file-facts.ts'

/** A page over this with everything it loads is PAGE_TOO_HEAVY. */
export const PAGE_WEIGHT_LIMIT = 1024 * 1024
/** An image over this many times the largest size a page shows it at is IMAGE_OVERSIZED (twice covers high-density screens)... */
export const OVERSIZE_FACTOR = 2
/** ...when it is over this size: a small icon drawn smaller costs little. */
export const OVERSIZED_MIN_BYTES = 16 * 1024

/** A bundle file another file names, and how it uses it. */
export interface Loaded {
  file: string
  kind: ReferenceKind
}

const WEIGHING: ReadonlySet<ReferenceKind> = new Set(['image', 'stylesheet', 'script', 'resource'])
/** Files whose own loads come with them: stylesheets (their fonts, images, imports) and scripts (their imports). */
const FOLLOWED: ReadonlySet<ReferenceKind> = new Set(['stylesheet', 'script'])

/** PAGE_TOO_HEAVY for `page` when it weighs over the limit with what it loads, naming the heaviest files. */
export function pageTooHeavy(page: string, loads: ReadonlyMap<string, Loaded[]>, sizes: ReadonlyMap<string, number>): Warning | null {
  const counted = new Set<string>([page])
  const pending: Loaded[] = [...(loads.get(page) ?? [])]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (!WEIGHING.has(next.kind) || counted.has(next.file)) continue
    counted.add(next.file)
    if (FOLLOWED.has(next.kind)) pending.push(...(loads.get(next.file) ?? []))
  }
  let total = 0
  for (const file of counted) total += sizes.get(file) ?? 0
  if (total <= PAGE_WEIGHT_LIMIT) return null
  const heaviest = [...counted]
    .sort((a, b) => (sizes.get(b) ?? 0) - (sizes.get(a) ?? 0))
    .slice(0, 3)
    .map((file) => `${file} ${humanSize(sizes.get(file) ?? 0)}`)
  return {
    code: 'PAGE_TOO_HEAVY',
    path: page,
    message: `${page} weighs ${humanSize(total)} with the files it loads (heaviest: ${heaviest.join(', ')}): shrink them (compress and resize images, split scripts) to stay under ${humanSize(PAGE_WEIGHT_LIMIT)}.`,
  }
}

/** An <img> of a page, resolved to the bundle file it shows. */
export interface ShownFile {
  file: string
  line: number
  width: number | null
  height: number | null
}

/**
 * IMAGE_OVERSIZED for each image of `page` that is over OVERSIZE_FACTOR times the largest size
 * the page shows it at, when every <img> showing it says a width or a height. `pixels`: the
 * images' own sizes, where their headers give them.
 */
export function oversizedImages(
  page: string,
  shown: readonly ShownFile[],
  pixels: ReadonlyMap<string, { width: number; height: number }>,
  sizes: ReadonlyMap<string, number>,
): Warning[] {
  const byFile = new Map<string, ShownFile[]>()
  for (const img of shown) {
    const list = byFile.get(img.file)
    if (list) list.push(img)
    else byFile.set(img.file, [img])
  }
  const found: Warning[] = []
  for (const [file, uses] of byFile) {
    const own = pixels.get(file)
    const bytes = sizes.get(file) ?? 0
    if (own === undefined || bytes <= OVERSIZED_MIN_BYTES || uses.some((use) => use.width === null && use.height === null)) continue
    // The largest share of the image any <img> shows: a width says it across, else a height.
    const share = Math.max(...uses.map((use) => (use.width !== null ? use.width / own.width : use.height! / own.height)))
    if (share * OVERSIZE_FACTOR >= 1) continue
    const wide = Math.ceil(own.width * share)
    found.push({
      code: 'IMAGE_OVERSIZED',
      path: page,
      line: uses[0]!.line,
      message: `${page} shows ${file} (${own.width}×${own.height} pixels, ${humanSize(bytes)}) at most ${wide} pixels wide: publish a copy about ${wide * OVERSIZE_FACTOR} pixels wide for this page (or give the <img> a srcset).`,
    })
  }
  return found
}

/** A size as a person reads it: `1.5 MiB`, `320 KiB`, `900 bytes`. */
function humanSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(2).replace(/\.?0+$/, '')} MiB`
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`
  return `${bytes} bytes`
}
