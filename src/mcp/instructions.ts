/**
 * The MCP server's instructions: how the tools fit together, read by an agent once per
 * connection. Each line speaks of the tools of one toolset and is given only when that toolset
 * was chosen; the toolsets left out are named, with how to choose them.
 */
import { TOOLSETS, type ToolsetName, TOOLSET_NAMES } from './toolsets.ts'

type Line = readonly [ToolsetName | null, string]

const lines = (siteUrls: string): Line[] => [
  [
    null,
    `Plinth hosts static websites. You write the whole site (HTML, CSS, JS, images) and publish it as files; Plinth checks them against its authoring rules (publish_website lists them), stores them as a numbered version and serves it at once at ${siteUrls}.`,
  ],
  [
    'publishing',
    '- New site: suggest_slug (optional), then publish_website. Change a site: publish_version with baseVersion and changes (put, delete, move, edit: a patch of the files), or with the complete new bundle, where files you do not change can be passed by sha256 instead of content. diff_versions shows what changed between two versions (or a version and a draft).',
  ],
  [
    'drafts',
    "- Drafts, to change a site file by file or to build one too big for one call (publish_website a placeholder index.html first): start_draft, then write_file, edit_file (exact-text edits), move_file and delete_file, each checked at once; list_files and read_file to look (read_file also reads a published version); open the draft's previewUrl; publish_draft makes it the next version, discard_draft drops it.",
  ],
  [
    'publishing',
    '- Review before going live: publish with promote false, open its previewUrl, then promote_version. promote_version also rolls back to any older version.',
  ],
  [
    'publishing',
    '- Find your sites with list_websites; inspect one with get_website or list_versions (versions come in pages, newest first: pass nextCursor as cursor for older ones).',
  ],
  ['publishing', '- Large binaries: create_upload, PUT the bytes to uploadUrl, then give { uploadId } instead of content.'],
  [
    'content',
    '- Collection content (posts, products...): list_collections, get_collection (its fields say what entry data holds), create_collection, update_collection; entries with upsert_entries, put_entry, list_entries, get_entry, delete_entry. Entries are served on the live site at /{collection}-{slug} as soon as they are written.',
  ],
  [
    'approvals',
    '- When a person must approve before a version goes live: publish with promote false, request_promotion with a note, then get_promotion_request for the outcome (approved: it is live; declined: read the reason); withdraw_promotion_request takes back one that should not be approved. To make a version live at a set time: schedule_promotion with promoteAt; list_schedules, cancel_schedule.',
  ],
  ['images', "- Images for pages and entries: import_asset copies one into the site's library, from a URL or an uploadId."],
]

const ERRORS =
  '- Every error result has isError true and its text is JSON {"error": {code, message, fields?, violations?, retryAfter?}}: VALIDATION_FAILED names each bad argument in fields; PUBLISH_INVALID lists every broken rule in violations (code, message, path), so fix them all before retrying; RATE_LIMITED gives retryAfter in seconds; NOT_FOUND also covers sites you may not see.'

/** The instructions for a connection that chose `toolsets`. */
export function instructions(siteUrls: string, toolsets: readonly ToolsetName[]): string {
  const given = lines(siteUrls)
    .filter(([toolset]) => toolset === null || toolsets.includes(toolset))
    .map(([, text]) => text)
  const others = TOOLSET_NAMES.filter((name) => !toolsets.includes(name))
  if (others.length > 0) {
    given.push(
      `- More tools come in toolsets this connection did not choose: ${others.map((name) => `${name} (${TOOLSETS[name]})`).join('; ')}. Name the ones you want in the X-MCP-Toolsets header or the toolsets query parameter of the MCP URL, comma-separated (default for the default ones, all for every tool): ?toolsets=default,${others[0]}.`,
    )
  }
  return [...given, ERRORS].join('\n')
}
