/**
 * The shapes of working on a site's files, shared by drafts and by versions read back: an exact-text
 * edit (text-edits.ts), a stored file as a caller reads it (file-views.ts), the path and line range
 * a read may ask for, and a file's change between two sets of files (file-changes.ts).
 */
import { type Static, Type } from 'typebox'
import { FILE_CHANGE_STATUSES } from '../core/enums.ts'
import { MAX_EDITS, MAX_PATH_CHARS, READ_LINES_MAX } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'

export const TextEditSchema = Type.Object(
  {
    oldText: Type.String({
      minLength: 1,
      description: 'Text to replace, exactly as it is in the file (spaces and line breaks included); it must occur exactly once.',
    }),
    newText: Type.String({ description: 'What replaces it; empty to remove it.' }),
  },
  { $id: 'TextEdit', additionalProperties: false },
)

/** The edits of one file: applied in order, each to the text the ones before it left; all or nothing. */
export const TextEditsField = Type.Array(ref(TextEditSchema), {
  minItems: 1,
  maxItems: MAX_EDITS,
  description: `1 to ${MAX_EDITS} edits, applied in order, each to the text the edits before it left. Each oldText must occur exactly once (else 422 EDIT_NO_MATCH or EDIT_AMBIGUOUS, naming the edit, the file and the count, and nothing is changed).`,
})

export const FileContentSchema = Type.Object(
  {
    path: Type.String(),
    size: Type.Integer({ description: 'Bytes of the whole file.' }),
    sha256: Type.String({ description: 'SHA-256 of the bytes, lowercase hex.' }),
    contentType: Type.String(),
    contentEncoding: Type.Enum(['utf8', 'base64'], {
      description: '`utf8` for text (by its type, or `_redirects`, `_headers` and templates) that is valid UTF-8; `base64` for anything else.',
    }),
    content: Type.String({ description: 'The text, or the lines asked for; base64 for a binary file (always whole).' }),
    lines: Type.Optional(
      Type.Object(
        {
          from: Type.Integer({ description: 'The first line given, counted from 1.' }),
          to: Type.Integer({ description: 'The last line given (inclusive); from - 1 when none is.' }),
          total: Type.Integer({ description: 'Lines in the whole file.' }),
        },
        { description: 'Present when offset or limit was given and the file is text.' },
      ),
    ),
  },
  { $id: 'FileContent', description: 'A stored file read back: text as text, anything else as base64.' },
)

export const LineRangeQuery = Type.Object(
  {
    offset: Type.Optional(Type.Integer({ minimum: 1, description: 'The first line to give, counted from 1 (text files only).' })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: READ_LINES_MAX, description: `How many lines to give at most, 1 to ${READ_LINES_MAX} (text files only).` }),
    ),
  },
  { additionalProperties: false },
)

/** A file's path in a URL (`.../files/{path}`), its slashes as they are. */
export const FilePathParam = Type.String({
  maxLength: MAX_PATH_CHARS,
  description: "The file's path within the site, its slashes as they are (`blog/index.html`); other characters percent-encoded as in any URL.",
})

export const FileChangeSchema = Type.Object(
  {
    path: Type.String({ description: 'The path on the `to` side (for a removed file, on the `from` side).' }),
    status: Type.Enum(FILE_CHANGE_STATUSES, {
      description: '`added`, `removed`, `changed` (other bytes at the same path) or `moved` (the same bytes at a new path, gone from previousPath).',
    }),
    previousPath: Type.Optional(Type.String({ description: 'For a move: where the bytes were.' })),
    sizeBefore: Type.Optional(Type.Integer({ description: 'Bytes on the `from` side.' })),
    sizeAfter: Type.Optional(Type.Integer({ description: 'Bytes on the `to` side.' })),
    diff: Type.Optional(Type.String({ description: 'For a changed text file: a unified diff, 3 lines of context.' })),
    diffTruncated: Type.Optional(Type.Literal(true, { description: 'For a changed text file whose diff is too large to show: read both sides instead.' })),
  },
  { $id: 'FileChange' },
)

/** The named schemas of editing. */
export const EDITING_SCHEMAS = [TextEditSchema, FileContentSchema, FileChangeSchema]

export type TextEditInput = Static<typeof TextEditSchema>
export type LineRangeInput = Static<typeof LineRangeQuery>
export type FileChangeView = Static<typeof FileChangeSchema>
