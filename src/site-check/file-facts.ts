/**
 * What the site check needs to know of one file, gathered while the authoring rules parse it
 * (publishing/html-rules.ts, css-rules.ts, js-rules.ts), so a file is read and parsed once: the
 * addresses it names and how it uses them, the ids it defines, and for a page its title,
 * language, viewport, images and `<base>`. Facts are plain data: they cross to and from the
 * worker threads, and are remembered with the rules' results by the file's hash
 * (publishing/content-scan-results.ts).
 *
 * Everything is bounded whatever the file holds: at most MAX_REFERENCES distinct addresses (the
 * rest are counted, and the check says it stopped short), MAX_ANCHORS ids, MAX_MENTIONS
 * path-like strings and MAX_PAGE_ITEMS images per page.
 */
import type { RedirectRules } from '../publishing/redirect-rules.ts'

/**
 * How a file uses an address: what BROKEN_LINK says of it, and whether it weighs on the page
 * (PAGE_TOO_HEAVY counts `image`, `stylesheet`, `script` and `resource`, following the
 * stylesheets' and scripts' own).
 */
export type ReferenceKind =
  /** A link a person follows: <a href>, <area href>, <form action>, a refresh, a `_redirects` target. */
  | 'link'
  /** An image shown with the page: <img src> (or its first srcset candidate), <input type=image>, <video poster>, SVG <image>. */
  | 'image'
  /** An image a browser may pick instead: srcset candidates, <source srcset>. */
  | 'candidate'
  /** <link rel=stylesheet>, @import. */
  | 'stylesheet'
  /** <script src>, <link rel=modulepreload>, a module import. */
  | 'script'
  /** Loaded with the page: CSS url() (fonts, backgrounds), <link rel=icon|preload|manifest>, SVG <use>. */
  | 'resource'
  /** Loaded when played: <video>, <audio>, <source> and <track> src. */
  | 'media'

export interface Reference {
  /** The address as written, trimmed (the host language's escapes decoded). */
  url: string
  kind: ReferenceKind
  /** 1-based line in the file. */
  line: number
}

export interface DuplicateId {
  id: string
  /** Where it is defined again, and where first. */
  line: number
  first: number
}

export interface MissingAlt {
  src: string
  line: number
}

/** An <img src> without srcset, with the size the page shows it at when its attributes give one in pixels. */
export interface ShownImage {
  url: string
  line: number
  width: number | null
  height: number | null
}

/** What only an HTML document has. */
export interface PageFacts {
  hasTitle: boolean
  hasLang: boolean
  hasViewport: boolean
  duplicateIds: DuplicateId[]
  missingAlt: MissingAlt[]
  shown: ShownImage[]
  /** The href of the first <base> inside the site: relative addresses resolve against it. */
  base: string | null
}

export interface FileFacts {
  refs: Reference[]
  /** Distinct addresses beyond MAX_REFERENCES, not kept. */
  refsDropped: number
  /** Ids and <a name> anchors the file defines (at most MAX_ANCHORS). */
  anchors: string[]
  /** Whether `anchors` holds every one (a fragment not among them is then surely missing). */
  anchorsComplete: boolean
  /** Path-like strings in scripts and attributes: a file so named counts as used (UNUSED_FILE). */
  mentions: string[]
  page: PageFacts | null
  /** `_redirects`: its rules, to tell which paths they answer. */
  redirects: RedirectRules | null
}

export const MAX_REFERENCES = 2000
export const MAX_ANCHORS = 10_000
export const MAX_MENTIONS = 2000
/** Duplicate ids, images without alt and shown images kept per page, each. */
export const MAX_PAGE_ITEMS = 500
/** Longer addresses and mentions are not kept (no file path is that long). */
const MAX_URL_CHARS = 2048

/** Where the rules put what they find: one collector per file, passed down with its line offset. */
export interface FactSink {
  reference(url: string, kind: ReferenceKind, line: number): void
  mention(text: string): void
}

/** A sink whose lines count from `firstLine` of the file (a <style> or <script> inside a page). */
export function offsetSink(sink: FactSink, firstLine: number): FactSink {
  if (firstLine <= 1) return sink
  return {
    reference: (url, kind, line) => sink.reference(url, kind, firstLine + line - 1),
    mention: (text) => sink.mention(text),
  }
}

/** Addresses a template fills in ({{ entry.url }}), which only rendering knows. */
const TEMPLATED = /\{\{|\{%/

export class FactsCollector implements FactSink {
  private readonly refs = new Map<string, Reference>()
  private refsDropped = 0
  private readonly mentions = new Set<string>()
  /** Ids by the line of their first definition, and <a name> anchors. */
  private readonly ids = new Map<string, number>()
  private readonly names = new Set<string>()
  private anchorsComplete = true
  page: PageFacts | null = null
  redirects: RedirectRules | null = null

  reference(raw: string, kind: ReferenceKind, line: number): void {
    const url = raw.trim()
    if (url === '' || url.length > MAX_URL_CHARS || TEMPLATED.test(url)) return
    const key = `${kind} ${url}`
    if (this.refs.has(key)) return
    if (this.refs.size >= MAX_REFERENCES) {
      this.refsDropped++
      return
    }
    this.refs.set(key, { url, kind, line })
  }

  mention(text: string): void {
    if (this.mentions.size < MAX_MENTIONS && text.length <= MAX_URL_CHARS) this.mentions.add(text)
  }

  /**
   * An id defined at `line` (`isId`), or the name of an <a name> anchor; on a page, an id defined
   * again is a DUPLICATE_ID.
   */
  anchor(value: string, line: number, isId: boolean): void {
    if (value === '') return
    const first = this.ids.get(value)
    if (first !== undefined) {
      const page = this.page
      if (isId && page !== null && page.duplicateIds.length < MAX_PAGE_ITEMS && !page.duplicateIds.some((d) => d.id === value))
        page.duplicateIds.push({ id: value, line, first })
      return
    }
    if (this.names.has(value) && !isId) return
    if (this.ids.size + this.names.size >= MAX_ANCHORS) this.anchorsComplete = false
    else if (isId) this.ids.set(value, line)
    else this.names.add(value)
  }

  facts(): FileFacts {
    return {
      refs: [...this.refs.values()],
      refsDropped: this.refsDropped,
      anchors: [...this.ids.keys(), ...[...this.names].filter((name) => !this.ids.has(name))],
      anchorsComplete: this.anchorsComplete,
      mentions: [...this.mentions],
      page: this.page,
      redirects: this.redirects,
    }
  }
}

/** A new page's facts, before its elements are seen. */
export const emptyPage = (): PageFacts => ({ hasTitle: false, hasLang: false, hasViewport: false, duplicateIds: [], missingAlt: [], shown: [], base: null })

/**
 * 1-based lines of offsets in a text, for offsets asked in increasing order (each newline is
 * counted once); an offset before the last one asked starts over.
 */
export class LineCounter {
  private at = 0
  private line = 1
  constructor(private readonly text: string) {}

  lineOf(offset: number): number {
    if (offset < this.at) {
      this.at = 0
      this.line = 1
    }
    for (let i = this.text.indexOf('\n', this.at); i !== -1 && i < offset; i = this.text.indexOf('\n', i + 1)) this.line++
    this.at = offset
    return this.line
  }
}
