/**
 * Toolsets: the groups the MCP tools come in. A client that names none is given the publishing
 * and draft tools, which are what building and changing a site takes and keep the tool list
 * small; it opts in to the others with the `X-MCP-Toolsets` header or the `toolsets` query
 * parameter of the MCP URL (comma-separated names; `default` for the default sets, `all` for
 * every one). A tool outside the chosen sets is neither listed nor callable.
 */
import type { Capability } from '../core/enums.ts'
import { validationFailed } from '../core/errors.ts'
import { quoted } from '../core/text.ts'

/** Every toolset, with what it holds, in the order tools are listed. */
export const TOOLSETS = {
  publishing: 'websites and versions: publish, patch, preview, promote, compare, uploads, site password, deletion',
  drafts: "a working copy of a site's files, changed one file at a time and published as the next version",
  content: 'collections and their entries, rendered as pages of the live site',
  images: "the site's image library",
  forms: "the submissions visitors send through a site's forms",
  traffic: "a live site's visits, counted by the server: page views, visitors, top paths, referrers, 404s",
  browser: "a real browser's look at a version's or a draft's page: screenshot and report",
  approvals: 'asking a person to make a version live and reading their decision; making a version live at a set time',
} as const

export type ToolsetName = keyof typeof TOOLSETS

export const TOOLSET_NAMES = Object.keys(TOOLSETS) as ToolsetName[]

/** What a client gets without naming a toolset. */
export const DEFAULT_TOOLSETS: readonly ToolsetName[] = ['publishing', 'drafts']

/**
 * What `default` means for a token: DEFAULT_TOOLSETS, and the approvals toolset for a token that
 * may publish previews but not promote, which has to ask a person to make a version live.
 */
export function defaultToolsetsFor(capabilities: readonly Capability[] | null): ToolsetName[] {
  const asks = capabilities !== null && capabilities.includes('preview') && !capabilities.includes('promote')
  return TOOLSET_NAMES.filter((name) => DEFAULT_TOOLSETS.includes(name) || (asks && name === 'approvals'))
}

/** Names that stand for several toolsets (`default` is the token's, see defaultToolsetsFor). */
const GROUP_NAMES = ['default', 'all']

export const TOOLSETS_HEADER = 'x-mcp-toolsets'
export const TOOLSETS_QUERY = 'toolsets'

const isToolset = (name: string): name is ToolsetName => Object.hasOwn(TOOLSETS, name)

/** The names a header or query value gives: comma-separated, repeats allowed, compared case-insensitively. */
const namesIn = (value: unknown): string[] =>
  [value]
    .flat()
    .filter((one): one is string => typeof one === 'string')
    .flatMap((one) => one.split(','))
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '')

const isKnown = (name: string): boolean => isToolset(name) || GROUP_NAMES.includes(name)

/**
 * The toolsets a request chose, in listing order: the names of the header and of the query
 * parameter together, or `defaults` (defaultToolsetsFor the caller's token) when it names none.
 * An unknown name is VALIDATION_FAILED naming the field that gave it and the known names.
 */
export function chosenToolsets(header: unknown, query: unknown, defaults: readonly ToolsetName[]): ToolsetName[] {
  const sources = [
    { field: 'X-MCP-Toolsets', names: namesIn(header) },
    { field: TOOLSETS_QUERY, names: namesIn(query) },
  ]
  for (const { field, names } of sources) {
    const unknown = names.find((name) => !isKnown(name))
    if (unknown === undefined) continue
    throw validationFailed(
      { [field]: `names an unknown toolset, ${quoted(unknown, 40)}: choose among ${[...TOOLSET_NAMES, 'default', 'all'].join(', ')}` },
      `Unknown toolset ${quoted(unknown, 40)}. Toolsets: ${TOOLSET_NAMES.join(', ')}; default (${DEFAULT_TOOLSETS.join(', ')}); all.`,
    )
  }
  const named = sources.flatMap((source) => source.names)
  if (named.length === 0) return [...defaults]
  const chosen = new Set(named.flatMap((name) => (isToolset(name) ? [name] : name === 'all' ? TOOLSET_NAMES : defaults)))
  return TOOLSET_NAMES.filter((name) => chosen.has(name))
}
