/**
 * Liquid templates of a site (files under `_templates/`): how Liquid is configured for them, in one
 * place, and the publish rule that parses every template so a syntax error, an unknown filter or an
 * unknown tag is refused at publish (TEMPLATE_INVALID, with the file and line) instead of failing
 * on the site. site-content renders with exactly these options.
 */
import { Drop, Liquid, type LiquidOptions } from 'liquidjs'
import type { PublishViolation } from '../core/errors.ts'
import { escapeHtml } from '../core/html.ts'

/** The folder of a version that holds its templates; it is never served as files. */
export const TEMPLATE_DIR = '_templates/'

/** Rich text that was sanitized when the entry was written: output without escaping. */
export class SafeHtml extends Drop {
  constructor(readonly html: string) {
    super()
  }
  override valueOf(): string {
    return this.html
  }
  override toString(): string {
    return this.html
  }
}

function escapeUnlessSafe(value: unknown): string {
  if (value instanceof SafeHtml) return value.html
  const shown: unknown = value instanceof Drop ? value.valueOf() : value
  if (shown === null || shown === undefined) return ''
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- any other value is output as Liquid outputs it: by String()
  return escapeHtml(String(shown))
}

/** Limits that keep one template from taking the server down (it is user-written). */
const LIMITS = { parseLimit: 1_000_000, renderLimit: 2_000, memoryLimit: 50_000_000 }

/**
 * The Liquid options of a site's templates. `files` maps names under `_templates/` to their text:
 * an in-memory mapping, so Liquid never touches the file system and includes resolve there.
 */
export function liquidOptions(files: ReadonlyMap<string, string>): LiquidOptions {
  return {
    templates: Object.fromEntries(files),
    extname: '.html',
    outputEscape: escapeUnlessSafe,
    strictFilters: true,
    ownPropertyOnly: true,
    timezoneOffset: 0,
    cache: true,
    ...LIMITS,
  }
}

/** Whether a bundle file is a template Liquid parses: a text file under `_templates/` (other files there are left alone). */
export function isTemplateFile(path: string, contentType: string): boolean {
  return path.startsWith(TEMPLATE_DIR) && contentType.startsWith('text/')
}

/** The Liquid that parses templates at publish: nothing to include (parsing never follows includes). */
let checker: Liquid | null = null

/**
 * Parses one template (`text` of the file at `path`) and reports a TEMPLATE_INVALID violation
 * naming the file and the line when Liquid refuses it. Each parse is bounded by the parse limit.
 */
export function scanTemplate(text: string, path: string, emit: (v: PublishViolation) => void): void {
  checker ??= new Liquid(liquidOptions(new Map()))
  try {
    checker.parse(text, path)
  } catch (error) {
    const { line, reason } = describe(error)
    emit({
      code: 'TEMPLATE_INVALID',
      path,
      detail: line === null ? reason : `line ${line}: ${reason}`,
      message: `${path} is not a valid Liquid template${line === null ? '' : ` (line ${line})`}: ${reason}. Fix the template (see the LiquidJS documentation for the tags and filters available) and publish again.`,
    })
  }
}

interface LiquidErrorShape {
  message?: unknown
  token?: { getPosition?: () => [number, number] }
  originalError?: { message?: unknown }
}

/** The line (1-based) and the bare reason of a Liquid parse error. */
function describe(error: unknown): { line: number | null; reason: string } {
  const e = (error ?? {}) as LiquidErrorShape
  let line: number | null = null
  try {
    const position = e.token?.getPosition?.()
    if (position !== undefined && Number.isSafeInteger(position[0])) line = position[0]
  } catch {
    line = null
  }
  // Liquid appends ", file:…, line:…, col:…" to its messages: the violation says those itself.
  const raw = String(e.originalError?.message ?? e.message ?? error)
  const reason = raw.replace(/, (file:.*?, )?line:\d+, col:\d+$/, '').slice(0, 300)
  return { line, reason }
}
