/**
 * Bundles the benchmark publishes: the 4 KB page it serves, a maximal bundle (40 files, just under
 * 8 MiB decoded, fresh random bytes each time so nothing dedupes), an ordinary 40-file site of
 * about 180 KB and small 3-file sites. All of them pass the authoring rules (relative URLs only,
 * no frames, no service workers).
 */
import { randomBytes, randomInt } from 'node:crypto'

export interface BundleFile {
  path: string
  content: string
  contentEncoding?: 'utf8' | 'base64'
}

export const MiB = 1024 * 1024
export const MAX_BUNDLE_BYTES = 8 * MiB
export const MAX_FILE_BYTES = 2 * MiB

const WORDS = (
  'plinth site page static publish serve bundle harbour garden kitchen table window river stone ' +
  'morning evening market bakery coffee studio gallery portfolio menu booking contact about team ' +
  'service quality local fresh season story craft design light open hours weekend family friends ' +
  'travel mountain coast village city street corner bright quiet warm simple honest modern classic'
).split(' ')

/** `count` words; random unless a seed is given (then deterministic). */
function words(count: number, seed?: number): string {
  const out: string[] = []
  let s = seed ?? 0
  for (let i = 0; i < count; i++) {
    const index = seed === undefined ? randomInt(WORDS.length) : (s = (s * 1103515245 + 12345) >>> 0) % WORDS.length
    out.push(WORDS[index]!)
  }
  return out.join(' ')
}

/** Exactly `bytes` bytes of ASCII HTML: a normal page filled with paragraphs, padded with a comment. */
export function htmlPage(bytes: number, title: string, links: { css?: string; js?: string; nav?: string[]; img?: string[] } = {}, seed?: number): string {
  const head =
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${title}</title>` +
    (links.css ? `<link rel="stylesheet" href="${links.css}">` : '') +
    (links.js ? `<script src="${links.js}" defer></script>` : '') +
    `</head>\n<body><header><h1>${title}</h1><nav>` +
    (links.nav ?? []).map((href) => `<a href="${href}">${href.replace('.html', '')}</a> `).join('') +
    `</nav></header>\n<main>\n` +
    (links.img ?? []).map((src) => `<img src="${src}" alt="" loading="lazy">\n`).join('')
  const tail = '</main>\n<footer>Published with Plinth.</footer></body></html>\n'
  let body = ''
  let n = 0
  for (;;) {
    const paragraph = `<p>${words(24, seed === undefined ? undefined : seed + n)}.</p>\n`
    n++
    if (head.length + body.length + paragraph.length + tail.length + 8 > bytes) break
    body += paragraph
  }
  const gap = bytes - head.length - body.length - tail.length
  if (gap < 0) throw new Error(`htmlPage: ${bytes} bytes is too small for its head and tail`)
  const page = head + body + (gap >= 7 ? `<!--${'x'.repeat(gap - 7)}-->` : ' '.repeat(gap)) + tail
  if (Buffer.byteLength(page) !== bytes) throw new Error('htmlPage: size mismatch')
  return page
}

/** The page the serving benchmark serves: exactly 4,096 bytes, the same on every run. */
export function fourKbPage(): string {
  return htmlPage(4096, 'Plinth bench page', { css: 'style.css' }, 42)
}

export const SMALL_CSS = 'body { font-family: system-ui, sans-serif; color: #222; margin: 0 auto; max-width: 44rem; }\n'

function css(bytes: number, nonce: string): string {
  let out = `/* ${nonce} */\n:root { --accent: #1a6; --ink: #222; }\n`
  for (let i = 0; out.length < bytes - 120; i++) {
    out += `.c-${nonce.slice(0, 6)}-${i} { color: #${randomInt(0x1000000).toString(16).padStart(6, '0')}; margin: ${randomInt(40)}px ${randomInt(40)}px; padding: ${randomInt(20)}px; }\n`
  }
  return out
}

function js(bytes: number, nonce: string, module: boolean): string {
  let out = module ? `import { format } from './util.js'\n// ${nonce}\n` : `// ${nonce}\n'use strict'\n`
  for (let i = 0; out.length < bytes - 200; i++) {
    out += `function f_${i}(items) {\n  const labels = ${JSON.stringify(words(8).split(' '))}\n  return items.map((item, k) => labels[k % labels.length] + ':' + item).join(', ')\n}\n`
  }
  return out + (module ? 'export const ready = format(true)\n' : 'document.documentElement.dataset.ready = "1"\n')
}

/**
 * A maximal bundle: 40 files, 15 HTML pages (index.html + 14), 3 CSS and 2 JS files (+ util.js),
 * 19 random PNG-named images (two of 1.5 MiB); total decoded size just under 8 MiB, every file
 * at most 2 MiB. Every call has fresh random bytes, so no blob is shared with an earlier bundle.
 */
export function maximalBundle(): { files: BundleFile[]; bytes: number } {
  const nonce = randomBytes(8).toString('hex')
  const pages = ['index.html', ...Array.from({ length: 14 }, (_, i) => `page-${String(i + 1).padStart(2, '0')}.html`)]
  const images = Array.from({ length: 19 }, (_, i) => `img/photo-${String(i + 1).padStart(2, '0')}.png`)
  const text: BundleFile[] = pages.map((page, i) => ({
    path: page,
    content: htmlPage(24 * 1024, `Page ${i} ${nonce}`, {
      css: `css/site-${(i % 3) + 1}.css`,
      js: `js/app-${(i % 2) + 1}.js`,
      nav: pages.slice(0, 8),
      img: images.slice(i, i + 3),
    }),
  }))
  for (let i = 1; i <= 3; i++) text.push({ path: `css/site-${i}.css`, content: css(32 * 1024, `${nonce}${i}`) })
  text.push({ path: 'js/app-1.js', content: js(48 * 1024, `${nonce}1`, false) })
  text.push({ path: 'js/app-2.js', content: js(48 * 1024, `${nonce}2`, true) })
  text.push({ path: 'js/util.js', content: `// ${nonce}\nexport function format(value) { return String(value) }\n` })

  const textBytes = text.reduce((sum, f) => sum + Buffer.byteLength(f.content), 0)
  const budget = MAX_BUNDLE_BYTES - 4096 - textBytes // "just under": 4 KiB of headroom
  const big = Math.floor(1.5 * MiB)
  const rest = budget - 2 * big
  const each = Math.floor(rest / (images.length - 2))
  const sized = images.map((path, i) => ({ path, size: i < 2 ? big : i === images.length - 1 ? rest - each * (images.length - 3) : each }))
  const binary: BundleFile[] = sized.map(({ path, size }) => ({ path, content: randomBytes(size).toString('base64'), contentEncoding: 'base64' }))
  const sizes = sized.map((file) => file.size)

  const files = [...text, ...binary]
  const bytes = textBytes + sizes.reduce((a, b) => a + b, 0)
  if (files.length !== 40 || bytes > MAX_BUNDLE_BYTES || sizes.some((s) => s > MAX_FILE_BYTES)) {
    throw new Error(`maximalBundle: ${files.length} files, ${bytes} bytes: outside the limits`)
  }
  return { files, bytes }
}

/**
 * A site as one that is kept up to date looks: 40 files, about 180 KB in all: 15 HTML pages of
 * 6 KB (index.html + 14, the most a site may have), each linking 8 of them, a stylesheet, a
 * script and an image; 5 stylesheets and 5 scripts of 6 KB; 15 PNG-named images of 1.5 to 2.8 KB
 * (random bytes).
 */
export function ordinarySite(): { files: BundleFile[]; bytes: number } {
  const nonce = randomBytes(8).toString('hex')
  const pages = ['index.html', ...Array.from({ length: 14 }, (_, i) => `page-${String(i + 1).padStart(2, '0')}.html`)]
  const images = Array.from({ length: 15 }, (_, i) => `img/photo-${String(i + 1).padStart(2, '0')}.png`)
  const files: BundleFile[] = pages.map((page, i) => ({
    path: page,
    content: htmlPage(6 * 1024, `Page ${i} ${nonce}`, {
      css: `css/site-${(i % 5) + 1}.css`,
      js: `js/app-${(i % 5) + 1}.js`,
      nav: pages.slice(0, 8),
      img: [images[i]!],
    }),
  }))
  for (let i = 1; i <= 5; i++) files.push({ path: `css/site-${i}.css`, content: css(6 * 1024, `${nonce}${i}`) })
  for (let i = 1; i <= 5; i++) files.push({ path: `js/app-${i}.js`, content: js(6 * 1024, `${nonce}${i}`, false) })
  for (const [i, path] of images.entries()) files.push({ path, content: randomBytes(1536 + i * 96).toString('base64'), contentEncoding: 'base64' })
  const bytes = files.reduce((sum, f) => sum + Buffer.from(f.content, f.contentEncoding === 'base64' ? 'base64' : 'utf8').length, 0)
  if (files.length !== 40) throw new Error(`ordinarySite: ${files.length} files`)
  return { files, bytes }
}

/** A small site: index.html, style.css and app.js (~2.5 KB in all), unique to site `n`. */
export function smallSite(n: number): BundleFile[] {
  const nonce = `${n}-${randomBytes(4).toString('hex')}`
  return [
    { path: 'index.html', content: htmlPage(1536, `Site ${nonce}`, { css: 'style.css', js: 'app.js' }) },
    { path: 'style.css', content: `/* ${nonce} */\n${SMALL_CSS}h1 { color: #${randomInt(0x1000000).toString(16).padStart(6, '0')}; }\n${css(400, nonce)}` },
    { path: 'app.js', content: js(500, nonce, false) },
  ]
}

/**
 * Content benchmark: the collection's fields (text, markdown rich text, number; no images) and
 * entries for upsertEntries. `entryData` is deterministic per (slug, nonce), so re-sending the
 * same batch is "unchanged".
 */
export const CONTENT_FIELDS = [
  { name: 'title', label: 'Title', type: 'text', required: true, maxLength: 200 },
  { name: 'summary', label: 'Summary', type: 'text', maxLength: 1000 },
  { name: 'body', label: 'Body', type: 'richText' },
  { name: 'rank', label: 'Rank', type: 'number', min: 0, max: 10_000_000 },
]

/** A ~1.2 KB markdown article: heading, paragraphs with emphasis and a link, a list, a quote. */
export function articleMarkdown(seed: number): string {
  return (
    `## ${words(5, seed)}\n\n` +
    `${words(30, seed + 1)} **${words(3, seed + 2)}** ${words(20, seed + 3)}.\n\n` +
    `- ${words(6, seed + 4)}\n- ${words(6, seed + 5)}\n- [${words(2, seed + 6)}](https://example.com/${seed})\n\n` +
    `${words(40, seed + 7)} *${words(4, seed + 8)}*.\n\n` +
    `> ${words(18, seed + 9)}\n\n` +
    `${words(35, seed + 10)}.\n`
  )
}

export function entryData(i: number, nonce: string): Record<string, unknown> {
  return {
    title: `${words(6, i)} ${nonce}`,
    summary: words(25, i + 100),
    body: { markdown: articleMarkdown(i * 31) },
    rank: i,
  }
}

/** A batch of `count` entries with slugs `{prefix}-{start..}`. */
export function entryBatch(prefix: string, start: number, count: number, nonce: string): Array<{ slug: string; data: Record<string, unknown> }> {
  return Array.from({ length: count }, (_, k) => ({ slug: `${prefix}-${start + k}`, data: entryData(start + k, nonce) }))
}

/** Words for the seeded rows (deterministic). */
export const seedWords = words
