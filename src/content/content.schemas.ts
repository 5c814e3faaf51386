/**
 * Shapes of collections and entries: the single source for validation, types and OpenAPI.
 * Entry items of a batch are checked one by one in the service (see entry-input.ts), so that one
 * bad item fails alone instead of the whole request.
 */
import { type Static, Type } from 'typebox'
import {
  CHOICE_OPTION_MAX_CHARS,
  CHOICE_OPTIONS_MAX,
  COLLECTION_NAME_MAX_CHARS,
  DATE_TIME_MAX_CHARS,
  DISPLAY_NAME_MAX_CHARS,
  ENTRY_SLUG_MAX_CHARS,
  FIELD_HELP_TEXT_MAX_CHARS,
  FIELD_NAME_MAX_CHARS,
  MAX_BATCH,
  MAX_FIELDS,
  TEXT_FIELD_DEFAULT_MAX,
  TEXT_FIELD_MAX_LIMIT,
  URL_MAX_CHARS,
} from '../core/limits.ts'
import { Nullable, ref, Timestamp, withClientOnlyConstraints } from '../core/schemas.ts'

const FIELD_TYPES = ['text', 'richText', 'image', 'date', 'number', 'boolean', 'url', 'choice'] as const
export type FieldType = (typeof FIELD_TYPES)[number]

export const COLLECTION_NAME_PATTERN = `^[a-z][a-z0-9]{1,${COLLECTION_NAME_MAX_CHARS - 1}}$`
const FIELD_NAME_PATTERN = `^[a-zA-Z][a-zA-Z0-9_]{0,${FIELD_NAME_MAX_CHARS - 1}}$`
/** Lowercase letters, digits and hyphens, a letter or digit at each end: never a path separator, a dot, or an entry id (ent_...). */
export const ENTRY_SLUG_PATTERN = `^[a-z0-9](?:[a-z0-9-]{0,${ENTRY_SLUG_MAX_CHARS - 2}}[a-z0-9])?$`

const FieldTypeSchema = Type.Enum(FIELD_TYPES, {
  $id: 'FieldType',
  description: `text: string; richText: {html} or {markdown}; image: a string naming an image; date: \`YYYY-MM-DD\` or an ISO-8601 date-time; number; boolean; url: absolute http(s)/mailto URL or a site path starting with "/"; choice: one of the field's options.`,
})

export const FieldSchema = Type.Object(
  {
    name: Type.String({ pattern: FIELD_NAME_PATTERN, description: 'Key of the value in entry data. Unique in the collection (case-insensitively).' }),
    label: Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX_CHARS }),
    type: ref(FieldTypeSchema),
    // No schema `default` (generated clients would then require the field): parseFields applies it.
    required: Type.Optional(Type.Boolean({ description: 'Default false. A required field must hold a value (not null, not an empty string).' })),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: CHOICE_OPTION_MAX_CHARS }), {
        minItems: 1,
        maxItems: CHOICE_OPTIONS_MAX,
        uniqueItems: true,
        description: 'choice only, and required for it: the allowed values.',
      }),
    ),
    maxLength: Type.Optional(
      Type.Integer({ minimum: 1, maximum: TEXT_FIELD_MAX_LIMIT, description: `text only: most characters (default ${TEXT_FIELD_DEFAULT_MAX}).` }),
    ),
    min: Type.Optional(Type.Number({ description: 'number only: smallest allowed value.' })),
    max: Type.Optional(Type.Number({ description: 'number only: largest allowed value.' })),
    helpText: Type.Optional(Type.String({ maxLength: FIELD_HELP_TEXT_MAX_CHARS, description: 'Shown to editors; no effect on validation.' })),
  },
  { $id: 'Field', additionalProperties: false },
)
export type Field = Static<typeof FieldSchema>

/** The fields of a collection row (stored as JSON text), with `required` false where it was not given. */
export const parseFields = (json: string): Field[] => (JSON.parse(json) as Field[]).map((field) => ({ ...field, required: field.required ?? false }))

const fieldsList = Type.Array(ref(FieldSchema), {
  maxItems: MAX_FIELDS,
  description: `Up to ${MAX_FIELDS} fields, in display order.`,
})

export const CollectionCreateSchema = Type.Object(
  {
    name: Type.String({
      pattern: COLLECTION_NAME_PATTERN,
      description:
        'URL-safe name: 2 to 40 lowercase letters and digits, starting with a letter, no hyphen. Entries are served at `/{name}-{slug}`. Some names are reserved (see docs).',
    }),
    label: Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX_CHARS }),
    fields: fieldsList,
  },
  { $id: 'CollectionCreate', additionalProperties: false },
)
export type CollectionCreate = Static<typeof CollectionCreateSchema>

export const CollectionUpdateSchema = Type.Object(
  {
    label: Type.Optional(Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX_CHARS })),
    fields: Type.Optional(
      Type.Array(ref(FieldSchema), {
        maxItems: MAX_FIELDS,
        description:
          'The complete new list of fields (not a diff). A removed field keeps its stored values (see removedFields); a field whose type changes is refused while entries hold values for it.',
      }),
    ),
  },
  { $id: 'CollectionUpdate', additionalProperties: false, minProperties: 1 },
)
export type CollectionUpdate = Static<typeof CollectionUpdateSchema>

export const CollectionSchema = Type.Object(
  {
    id: Type.String({ description: 'col_...' }),
    name: Type.String(),
    label: Type.String(),
    fields: Type.Array(ref(FieldSchema)),
    removedFields: Type.Array(ref(FieldSchema), {
      description:
        'Fields removed by updateCollection whose stored values are kept and still returned in entry data. Adding a field of the same name and type again brings them back into use.',
    }),
    entryPath: Type.String({ description: 'Where an entry is served on the site, e.g. `/posts-{slug}`.' }),
    reservedPaths: Type.Array(Type.String(), {
      description: 'Root paths of the site this collection reserves; a publish may not add files there (RESERVED_PATH).',
    }),
    entryCount: Type.Integer(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Collection', additionalProperties: false },
)
export type Collection = Static<typeof CollectionSchema>

export const CollectionListSchema = Type.Object({ items: Type.Array(ref(CollectionSchema), { description: 'By name.' }) }, { $id: 'CollectionList' })

const EntryInputSchema = Type.Object(
  {
    slug: Type.String({
      minLength: 1,
      maxLength: ENTRY_SLUG_MAX_CHARS,
      pattern: ENTRY_SLUG_PATTERN,
      description: `Identity of the entry: 1 to ${ENTRY_SLUG_MAX_CHARS} lowercase letters, digits and hyphens, a letter or digit at each end.`,
    }),
    publishedAt: Type.Optional(
      Type.String({
        maxLength: DATE_TIME_MAX_CHARS,
        description:
          'ISO-8601 date-time with a time zone, stored in UTC. Default: kept on update, now on create. A future instant keeps the entry off the public site until then.',
      }),
    ),
    createdAt: Type.Optional(
      Type.String({
        maxLength: DATE_TIME_MAX_CHARS,
        description: 'ISO-8601 date-time with a time zone, stored in UTC. Default: kept on update, now on create (set it when importing an archive).',
      }),
    ),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: `Field values by field name, checked against the collection's fields. A richText value is {html} or {markdown}; image forms are listed in docs/guide/content.md.`,
      examples: [{ title: 'Hello', body: { markdown: '# Hi' } }],
    }),
  },
  { $id: 'EntryInput', additionalProperties: false },
)
export type EntryInput = Static<typeof EntryInputSchema>

/** putEntry: the slug comes from the path. */
export const EntryPutSchema = Type.Object(
  {
    publishedAt: EntryInputSchema.properties.publishedAt,
    createdAt: EntryInputSchema.properties.createdAt,
    data: EntryInputSchema.properties.data,
    baseUrl: Type.Optional(Type.String({ maxLength: URL_MAX_CHARS, description: 'Resolves relative image URLs.' })),
  },
  { $id: 'EntryPut', additionalProperties: false },
)
export type EntryPut = Static<typeof EntryPutSchema>

export const EntrySchema = Type.Object(
  {
    id: Type.String({ description: 'ent_...' }),
    slug: Type.String(),
    collection: Type.String({ description: 'Name of the collection.' }),
    path: Type.String({ description: 'Where the entry is served on the site: `/{collection}-{slug}`.' }),
    live: Type.Boolean({ description: 'False while publishedAt is in the future: the entry is stored but not on the public site yet.' }),
    publishedAt: Timestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Values as sent (image URLs made absolute; an image field sent inline or by upload holds the library path of its copy), plus kept values of removed fields.',
    }),
    rendered: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Display-ready values of the current fields: richText as sanitized HTML whose images point at the image library; image as its library URL; other types as stored.',
    }),
  },
  { $id: 'Entry', additionalProperties: false },
)
export type Entry = Static<typeof EntrySchema>

export const EntryListSchema = Type.Object(
  {
    items: Type.Array(ref(EntrySchema), { description: 'Newest publishedAt first (ties by id), scheduled entries included.' }),
    nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
  },
  { $id: 'EntryList' },
)
export type EntryList = Static<typeof EntryListSchema>

export const EntryBatchRequestSchema = Type.Object(
  {
    baseUrl: Type.Optional(
      Type.String({
        maxLength: URL_MAX_CHARS,
        description: 'Absolute http(s) URL that relative image URLs (image fields and <img> in rich text) are resolved against.',
      }),
    ),
    // Clients are told each item is an EntryInput; the validator accepts any object so that the
    // service checks items one by one and a bad item fails alone with its own result.
    entries: withClientOnlyConstraints(
      Type.Array(
        Type.Unsafe<Record<string, unknown>>({
          type: 'object',
          description: 'An EntryInput. Each item is checked on its own: a bad item fails alone with its own result.',
        }),
        {
          maxItems: MAX_BATCH,
          description: `Up to ${MAX_BATCH} entries (EntryInput). Each item is checked on its own: a bad item fails alone with its own result.`,
        },
      ),
      { items: { $ref: 'EntryInput#' } },
    ),
  },
  { $id: 'EntryBatchRequest', additionalProperties: false },
)
export type EntryBatchRequest = Static<typeof EntryBatchRequestSchema>

const ENTRY_RESULT_STATUSES = ['created', 'updated', 'unchanged', 'failed'] as const

export const EntryErrorSchema = Type.Object(
  {
    code: Type.String({ description: 'VALIDATION_FAILED, DUPLICATE_SLUG, IMAGE_IMPORT_FAILED, RICH_TEXT_TOO_COSTLY, RICH_TEXT_BUDGET_EXCEEDED or INTERNAL.' }),
    message: Type.String(),
    field: Type.Optional(Type.String({ description: 'The first offending field, e.g. `slug` or `data.title`.' })),
    fields: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Every offending field with its message.' })),
  },
  { $id: 'EntryError', additionalProperties: false },
)
export type EntryError = Static<typeof EntryErrorSchema>

export const EntryResultSchema = Type.Object(
  {
    slug: Nullable(Type.String({ description: "The item's slug as sent (null when it sent none)." })),
    status: Type.Enum(ENTRY_RESULT_STATUSES),
    entry: Type.Optional(ref(EntrySchema)),
    error: Type.Optional(ref(EntryErrorSchema)),
  },
  { $id: 'EntryResult', additionalProperties: false },
)
export type EntryResult = Static<typeof EntryResultSchema>

export const EntryBatchResultSchema = Type.Object(
  {
    results: Type.Array(ref(EntryResultSchema), { description: 'One result per input item, in input order.' }),
    counts: Type.Object(
      { created: Type.Integer(), updated: Type.Integer(), unchanged: Type.Integer(), failed: Type.Integer() },
      { additionalProperties: false },
    ),
  },
  { $id: 'EntryBatchResult', additionalProperties: false },
)
export type EntryBatchResult = Static<typeof EntryBatchResultSchema>

export const CONTENT_SCHEMAS = [
  FieldTypeSchema,
  FieldSchema,
  CollectionCreateSchema,
  CollectionUpdateSchema,
  CollectionSchema,
  CollectionListSchema,
  EntryInputSchema,
  EntryPutSchema,
  EntrySchema,
  EntryListSchema,
  EntryBatchRequestSchema,
  EntryErrorSchema,
  EntryResultSchema,
  EntryBatchResultSchema,
]
