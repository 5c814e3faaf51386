/**
 * The documentation as the web site serves it: the markdown of `docs/guide/` (the same files a
 * reader of the repository opens), read and rendered once, when a page first needs it (not at
 * start: rendering the whole guide is a noticeable part of a start's time). The guide is written with the local
 * default addresses (`http://localhost:8080`, `{slug}.localhost:8080`); each instance serves it
 * with its own. Links between pages (`rest.md#limits`) become `/docs/rest#limits` in HTML and
 * absolute `.md` URLs in markdown, so both representations link within themselves.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type MarkdownIt from 'markdown-it'
import type anchor from 'markdown-it-anchor'
import type { Config } from '../config.ts'

const GUIDE = fileURLToPath(new URL('../../docs/guide/', import.meta.url))
/** The order pages are listed in; pages not named here follow, by name. */
const ORDER = [
  'getting-started',
  'deploy',
  'rest',
  'tokens',
  'drafts',
  'screenshots',
  'mcp',
  'authoring',
  'site-check',
  'migrating',
  'content',
  'forms',
  'traffic',
  'errors',
  'self-hosting',
  'scaling',
  'custom-domains',
  'webhooks',
  'approvals',
]
/** Where the site's own pages are; the rest of `http://localhost:8080/...` is the API. */
const SITE_PATHS = /^\/(?:$|docs|sign-up|sign-in|dashboard|account|llms)/

export interface DocPage {
  /** `rest`, or `` for the index. */
  name: string
  title: string
  summary: string
  /** Path on the site: `/docs/rest`, `/docs`. */
  path: string
  markdown: string
  html: string
}

export interface Docs {
  index: DocPage
  pages: DocPage[]
  find(name: string): DocPage | undefined
  /** Markdown of a standalone page (landing, 404) rendered as HTML with the same rules. */
  render(markdown: string): { markdown: string; html: string }
}

/**
 * A heading's id as GitHub makes it, so a link to `page.md#some-heading` opens the same place on
 * the site and in the repository: lowercase, letters, digits, `-` and `_` kept, other punctuation
 * dropped, each space a `-`. A repeated heading gets `-1`, `-2` (markdown-it-anchor, as GitHub).
 */
export const headingSlug = (text: string): string =>
  text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')

type Renderer = InstanceType<typeof MarkdownIt>
let markdownIt: Renderer | undefined
/** The renderer, loaded on its first use (the guide and the home page are rendered on first view). */
function renderer(): Renderer {
  if (!markdownIt) {
    const require = createRequire(import.meta.url)
    const Markdown = require('markdown-it') as typeof MarkdownIt
    markdownIt = new Markdown({ html: false, linkify: false, typographer: false }).use(require('markdown-it-anchor') as typeof anchor, {
      tabIndex: false,
      slugify: headingSlug,
    })
  }
  return markdownIt
}

/** The ids the site gives a markdown file's headings, in order. */
export function headingIds(markdown: string): string[] {
  return renderer()
    .parse(markdown, {})
    .filter((token) => token.type === 'heading_open')
    .map((token) => String(token.attrGet('id') ?? ''))
}

type DocsConfig = Pick<Config, 'baseUrl' | 'siteUrl' | 'siteDomain' | 'siteScheme'>

/** The guide, read and rendered on first use. */
export function loadDocs(config: DocsConfig, folder = GUIDE): Docs {
  let docs: Docs | undefined
  const now = () => (docs ??= readDocs(config, folder))
  return {
    get index() {
      return now().index
    },
    get pages() {
      return now().pages
    },
    find: (name) => now().find(name),
    render: (markdown) => now().render(markdown),
  }
}

function readDocs(config: DocsConfig, folder: string): Docs {
  const localize = (text: string) =>
    text
      .replace(/http:\/\/([a-z0-9{}-]+)\.localhost:8080/g, (_m, label: string) => `${config.siteScheme}://${label}.${config.siteDomain}`)
      .replace(/http:\/\/localhost:8080(\/[^\s)"'`<>]*)?/g, (_m, rest: string | undefined) => {
        const path = rest ?? ''
        return `${SITE_PATHS.test(path || '/') && path !== '' ? config.siteUrl : config.baseUrl}${path}`
      })
      .replace(/\.localhost:8080/g, `.${config.siteDomain}`)
  const pageLink = /\]\((index|[a-z0-9-]+)\.md(#[^)\s]*)?\)/g
  const forHtml = (text: string) => text.replace(pageLink, (_m, name: string, hash = '') => `](${name === 'index' ? '/docs' : `/docs/${name}`}${hash})`)
  const forMarkdown = (text: string) =>
    text.replace(pageLink, (_m, name: string, hash = '') => `](${config.siteUrl}${name === 'index' ? '/docs' : `/docs/${name}`}.md${hash})`)
  const render = (source: string) => {
    const text = localize(source)
    return { markdown: forMarkdown(text), html: renderer().render(forHtml(text)) }
  }

  const names = readdirSync(folder)
    .filter((file) => file.endsWith('.md'))
    .map((file) => file.slice(0, -3))
  const rank = (name: string) => (ORDER.includes(name) ? ORDER.indexOf(name) : ORDER.length)
  const pages = names
    .filter((name) => name !== 'index')
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((name) => page(name, readFileSync(`${folder}/${name}.md`, 'utf8'), render))
  const index = page('', readFileSync(`${folder}/index.md`, 'utf8'), render)
  const byName = new Map(pages.map((p) => [p.name, p]))
  return { index, pages, find: (name) => byName.get(name), render }
}

function page(name: string, source: string, render: Docs['render']): DocPage {
  const title = /^# (.+)$/m.exec(source)?.[1]?.trim() ?? name
  // The first paragraph after the title: the page's summary in llms.txt and its meta description.
  const afterTitle = source.slice(source.indexOf('\n', source.indexOf('# ')) + 1)
  const summary = (afterTitle.split(/\n\s*\n/).find((block) => block.trim() && !/^[#>|`-]/.test(block.trim())) ?? '').replace(/\s+/g, ' ').trim()
  const { markdown, html } = render(source)
  return { name, title, summary: plain(summary), path: name ? `/docs/${name}` : '/docs', markdown, html }
}

/** Markdown inline syntax removed: links keep their text, code its content. */
const plain = (text: string): string =>
  text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_]/g, '')
    .trim()
