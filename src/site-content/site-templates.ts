/**
 * Liquid templates of content pages. A site's live version may bring its own templates under
 * `_templates/`: `{collection}.html` renders an entry, `{collection}-list.html` a listing page,
 * and any other file there can be pulled in with `{% render 'name' %}` / `{% include 'name' %}`.
 * Templates are looked up in memory only (never on the server's file system), every output is
 * HTML-escaped unless it is rich text, which is stored already sanitized and passed as SafeHtml.
 * The Liquid settings are those of publishing/template-rules.ts, which parses every template at
 * publish with them, so a template that renders here was accepted there. The server renders in
 * worker threads (site-templates.pool.ts), never on the event loop: a template's cost is its
 * owner's to decide.
 */
import { Liquid } from 'liquidjs'
import type { Field } from '../content/content.schemas.ts'
import { liquidOptions, SafeHtml, TEMPLATE_DIR } from '../publishing/template-rules.ts'

export { SafeHtml, TEMPLATE_DIR }

/** A template that did not parse or render; the message names it (the site owner wrote it). */
export class TemplateFailure extends Error {
  /** What went wrong, without the template's name. */
  readonly reason: string

  constructor(
    readonly template: string,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    super(`The template ${template} could not be rendered: ${reason}`)
    this.reason = reason
  }
}

/** What renders a version's content pages: SiteTemplates in a thread, TemplatePool's view of a version on the server. */
export interface TemplateRenderer {
  render(name: string, fallback: string, context: object): Promise<{ html: string; template: string }>
}

/** The name a page's template has in its owner's error page: its file, or which default it is. */
export function templateLabel(name: string, files: ReadonlyMap<string, string>): string {
  return files.has(name) ? `${TEMPLATE_DIR}${name}` : `default ${name.endsWith('-list.html') ? 'listing' : 'entry'} template`
}

/** Where a value sits in a render context: keys and indexes from its root. */
type ContextPath = Array<string | number>

/**
 * A render context as it crosses to a template thread: plain data (SafeHtml is a class, which a
 * structured clone does not keep), and the places of its rich-text values. A rich-text value is
 * HTML sanitized when its entry was written, so the thread marks it SafeHtml again; a marker
 * inside the data could be confused with a value the owner stored, a list of places cannot.
 */
export interface PlainContext {
  data: Record<string, unknown>
  rich: ContextPath[]
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}

/** The plain form of a render context (built from JSON, a few levels deep: field values are scalars). */
export function toPlainContext(context: object): PlainContext {
  const rich: ContextPath[] = []
  const plain = (value: unknown, path: ContextPath): unknown => {
    if (value instanceof SafeHtml) {
      rich.push(path)
      return value.html
    }
    if (Array.isArray(value)) return value.map((v, i) => plain(v, [...path, i]))
    if (value !== null && typeof value === 'object' && isPlainObject(value)) {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) out[k] = plain(v, [...path, k])
      return out
    }
    return value
  }
  return { data: plain(context, []) as Record<string, unknown>, rich }
}

/** The render context again, rich text as SafeHtml (in place: the plain form is the thread's own copy). */
export function fromPlainContext(context: PlainContext): object {
  for (const path of context.rich) {
    let parent: unknown = context.data
    for (const key of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[key]
    const last = path[path.length - 1]!
    const holder = parent as Record<string | number, unknown>
    if (typeof holder[last] === 'string') holder[last] = new SafeHtml(holder[last])
  }
  return context.data
}

/** What a template sees of a field value: rich text as SafeHtml, everything else as stored. */
export function templateValue(field: Pick<Field, 'type'>, value: unknown): unknown {
  if (value === undefined || value === null) return null
  return field.type === 'richText' && typeof value === 'string' ? new SafeHtml(value) : value
}

const PAGE_STYLE =
  'body{font:17px/1.6 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#222}' +
  'img{max-width:100%;height:auto}a{color:#0645ad}time,.meta{color:#666;font-size:.9em}' +
  'nav.pages{display:flex;gap:1rem;margin-top:2rem}ul.entries{list-style:none;padding:0}ul.entries li{margin:1rem 0}'

const HEAD = (title: string): string =>
  '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
  '<meta name="viewport" content="width=device-width, initial-scale=1">' +
  `<title>${title}</title>` +
  '<link rel="alternate" type="application/atom+xml" href="{{ collection.atomUrl }}" title="{{ collection.label }}">' +
  '<link rel="alternate" type="application/feed+json" href="{{ collection.jsonUrl }}" title="{{ collection.label }}">' +
  `<style>${PAGE_STYLE}</style></head>\n`

const FIELD_VALUES =
  '{% for field in entry.fields %}{% if field.value != nil and field.name != entry.titleField %}' +
  '{% case field.type %}' +
  '{% when "richText" %}<div class="field field-{{ field.name }}">{{ field.value }}</div>\n' +
  '{% when "image" %}<figure class="field field-{{ field.name }}"><img src="{{ field.value }}" alt="{{ field.label }}"></figure>\n' +
  '{% when "url" %}<p class="field field-{{ field.name }}"><strong>{{ field.label }}:</strong> <a href="{{ field.value }}">{{ field.value }}</a></p>\n' +
  '{% when "boolean" %}<p class="field field-{{ field.name }}"><strong>{{ field.label }}:</strong> {% if field.value %}yes{% else %}no{% endif %}</p>\n' +
  '{% else %}<p class="field field-{{ field.name }}"><strong>{{ field.label }}:</strong> {{ field.value }}</p>\n' +
  '{% endcase %}{% endif %}{% endfor %}'

/** Used when the live version has no `_templates/{collection}.html`. */
export const DEFAULT_ENTRY_TEMPLATE =
  HEAD('{{ entry.title }} · {{ collection.label }}') +
  '<body><main><article>\n<p class="meta"><a href="{{ collection.url }}">{{ collection.label }}</a></p>\n' +
  '<h1>{{ entry.title }}</h1>\n<p class="meta"><time datetime="{{ entry.publishedAt }}">{{ entry.publishedAt | date: "%B %-d, %Y" }}</time></p>\n' +
  FIELD_VALUES +
  '</article></main></body></html>\n'

/** Used when the live version has no `_templates/{collection}-list.html`. */
export const DEFAULT_LIST_TEMPLATE =
  HEAD('{{ collection.label }}{% if pagination.page > 1 %} · page {{ pagination.page }}{% endif %}') +
  '<body><main>\n<h1>{{ collection.label }}</h1>\n' +
  '{% if entries.size == 0 %}<p>Nothing here yet.</p>\n{% else %}<ul class="entries">\n' +
  '{% for entry in entries %}<li><a href="{{ entry.url }}">{{ entry.title }}</a> ' +
  '<time datetime="{{ entry.publishedAt }}">{{ entry.publishedAt | date: "%B %-d, %Y" }}</time></li>\n{% endfor %}' +
  '</ul>\n{% endif %}' +
  '{% if pagination.pages > 1 %}<nav class="pages">{% if pagination.previous %}<a href="{{ pagination.previous }}" rel="prev">Newer</a>{% endif %}' +
  '<span>Page {{ pagination.page }} of {{ pagination.pages }}</span>' +
  '{% if pagination.next %}<a href="{{ pagination.next }}" rel="next">Older</a>{% endif %}</nav>{% endif %}\n' +
  '<p class="meta"><a href="{{ collection.atomUrl }}">Atom feed</a> · <a href="{{ collection.jsonUrl }}">JSON feed</a></p>\n' +
  '</main></body></html>\n'

type Parsed = ReturnType<Liquid['parse']>

/** The default templates, parsed once for the whole process (they include nothing). */
const defaults = new Liquid(liquidOptions(new Map()))
const parsedDefaults = new Map<string, Parsed>()

function parsedDefault(text: string): Parsed {
  let parsed = parsedDefaults.get(text)
  if (parsed === undefined) parsedDefaults.set(text, (parsed = defaults.parse(text)))
  return parsed
}

/**
 * The templates of one site version. `files` maps names under `_templates/` (e.g. `posts.html`)
 * to their text. Each template is parsed once for the life of this object, and a template that
 * does not parse keeps its error: it is not parsed again on the next request. Rendering happens
 * here only, behind render(), in a template thread (site-templates.thread.ts).
 */
export class SiteTemplates implements TemplateRenderer {
  private readonly liquid: Liquid
  private readonly parsed = new Map<string, Parsed | { error: unknown }>()
  /**
   * Bytes of heap the templates may take once parsed, for the bound of the templates a thread keeps:
   * their text twice (UTF-16), and 1,200 bytes for each tag or output, what the densest template
   * takes once parsed (docs/benchmarks.md#what-the-design-rests-on).
   */
  readonly weight: number

  constructor(private readonly files: ReadonlyMap<string, string>) {
    this.liquid = new Liquid(liquidOptions(files))
    let weight = 0
    for (const [name, text] of files) weight += 2 * (name.length + text.length) + 1_200 * (text.match(/\{[{%]/g)?.length ?? 0)
    this.weight = weight
  }

  /**
   * Renders `_templates/{name}` when the version has it, else the given default. `renderLimitMs`
   * replaces LiquidJS's renderLimit (publishing/template-rules.ts) for this render.
   */
  async render(name: string, fallback: string, context: object, renderLimitMs?: number): Promise<{ html: string; template: string }> {
    const own = this.files.get(name)
    const template = templateLabel(name, this.files)
    const options = renderLimitMs === undefined ? {} : { renderLimit: renderLimitMs }
    try {
      const html: unknown =
        own === undefined ? await defaults.render(parsedDefault(fallback), context, options) : await this.liquid.render(this.parse(name, own), context, options)
      return { html: String(html), template }
    } catch (error) {
      throw new TemplateFailure(template, error)
    }
  }

  private parse(name: string, text: string): Parsed {
    let parsed = this.parsed.get(name)
    if (parsed === undefined) {
      try {
        parsed = this.liquid.parse(text)
      } catch (error) {
        parsed = { error }
      }
      this.parsed.set(name, parsed)
    }
    if ('error' in parsed) throw parsed.error
    return parsed
  }
}
