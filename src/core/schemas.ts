/**
 * Schemas shared by every module. Each named schema has an $id, which makes it a named OpenAPI
 * component; routes point at it with ref(), which keeps the TypeScript type of the target.
 */
import { type Static, type TSchema, Type } from 'typebox'
import { JOB_STATUSES } from './enums.ts'
import { CURSOR_MAX_CHARS } from './limits.ts'

/** A `$ref` to a named schema that still carries the schema's static type. */
export const ref = <T extends TSchema & { $id?: string }>(schema: T) => {
  if (!schema.$id) throw new Error('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#` })
}

/**
 * The annotation that carries client-only constraints: constraints a schema shows clients (the
 * OpenAPI document, MCP tool listings) but the request validator does not enforce, because the
 * service checks them itself and answers better: a bundle over the file limit gets PUBLISH_INVALID
 * listing every violation at once, and a batch item that is not a valid entry fails alone.
 */
export const CLIENT_ONLY_KEYWORD = 'x-client-only'

/** `schema` as validated, carrying keywords clients are shown but not held to (see mergeClientOnlyConstraints). */
export const withClientOnlyConstraints = <T extends TSchema>(schema: T, constraints: Record<string, unknown>): T => ({
  ...schema,
  [CLIENT_ONLY_KEYWORD]: constraints,
})

/** A deep copy of a schema or document for clients: every client-only constraint merged in, the annotation gone. */
export function mergeClientOnlyConstraints<T>(value: T): T {
  if (Array.isArray(value)) return value.map(mergeClientOnlyConstraints) as T
  if (typeof value !== 'object' || value === null) return value
  const { [CLIENT_ONLY_KEYWORD]: constraints, ...rest } = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(rest)) out[key] = mergeClientOnlyConstraints(child)
  return (constraints === undefined ? out : { ...out, ...mergeClientOnlyConstraints(constraints as object) }) as T
}

/** The query of a paged listing: an opaque cursor and a page size (the service applies the default). */
export const PageQuery = (what: string, max: number, defaultSize: number) =>
  Type.Object(
    {
      cursor: Type.Optional(Type.String({ minLength: 1, maxLength: CURSOR_MAX_CHARS, description: 'nextCursor of the previous page.' })),
      // No schema `default` (generated clients would then require the parameter): the service applies it.
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: max, description: `${what} per page, 1 to ${max}. Default ${defaultSize}.` })),
    },
    { additionalProperties: false },
  )

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601 timestamp, UTC.' })

export const PublishViolationSchema = Type.Object(
  {
    code: Type.String({ description: 'Rule identifier, e.g. MISSING_INDEX, EXTERNAL_URL, IFRAME.' }),
    message: Type.String(),
    path: Type.Optional(Type.String({ description: 'The offending file, when the rule concerns one file.' })),
    detail: Type.Optional(Type.String()),
  },
  { $id: 'PublishViolation', additionalProperties: false },
)

/**
 * What the site check found in a published bundle (docs/guide/site-check.md): it refuses nothing.
 * `path` is the bundle file it concerns ('' for the whole bundle), `line` its 1-based line when it
 * points into a text file, `message` the fix in one line.
 */
export const WarningSchema = Type.Object(
  {
    code: Type.String({
      description:
        'BROKEN_LINK, MISSING_ANCHOR, BLOCKED_BY_POLICY, MIXED_CONTENT, MISSING_TITLE, MISSING_LANG, MISSING_VIEWPORT, MISSING_ALT, PAGE_TOO_HEAVY, IMAGE_OVERSIZED, DUPLICATE_ID, UNUSED_FILE, CHECK_INCOMPLETE or MORE_WARNINGS.',
    }),
    path: Type.String({ description: "The bundle file it concerns; '' for the whole bundle." }),
    line: Type.Optional(Type.Integer({ minimum: 1 })),
    message: Type.String({ description: 'What is wrong and the fix, in one line.' }),
  },
  { $id: 'Warning', additionalProperties: false },
)

export type Warning = Static<typeof WarningSchema>

const ErrorSchema = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String({ description: 'Stable machine-readable code.' }),
        message: Type.String({ description: 'Human-readable explanation.' }),
        fields: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Per-field validation messages.' })),
        violations: Type.Optional(Type.Array(ref(PublishViolationSchema), { description: 'Every authoring rule the bundle broke (PUBLISH_INVALID).' })),
        details: Type.Optional(
          Type.Record(Type.String(), Type.Unknown(), {
            description: 'What the caller acts on beyond fields: for TOKEN_NOT_ALLOWED, missingCapability and tokenCapabilities.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'Error', additionalProperties: false, description: 'Envelope of every non-2xx response.' },
)

export const JobStatusSchema = Type.Enum(JOB_STATUSES, { $id: 'JobStatus', description: 'Status of a job and of the version it produces.' })

/** Schemas to register with app.addSchema so that ref() resolves and OpenAPI names them. */
export const SHARED_SCHEMAS = [PublishViolationSchema, WarningSchema, ErrorSchema, JobStatusSchema]
