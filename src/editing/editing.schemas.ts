/**
 * The shapes of working on a site's files, shared by drafts and by versions read back: an exact-text
 * edit (text-edits.ts), a stored file as a caller reads it (file-views.ts) and the line range a read
 * may ask for.
 */
import { type Static, Type } from 'typebox'
import { MAX_EDITS } from '../core/limits.ts'

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
export const TextEditsField = Type.Array(TextEditSchema, {
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
    limit: Type.Optional(Type.Integer({ minimum: 1, description: 'How many lines to give at most (text files only).' })),
  },
  { additionalProperties: false },
)

/** The named schemas of editing. */
export const EDITING_SCHEMAS = [TextEditSchema, FileContentSchema]

export type TextEditInput = Static<typeof TextEditSchema>
export type LineRangeInput = Static<typeof LineRangeQuery>
