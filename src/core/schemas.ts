/**
 * Schemas shared by every module. Each named schema has an $id, which makes it a named OpenAPI
 * component; routes point at it with ref(), which keeps the TypeScript type of the target.
 */
import { type Static, type TSchema, Type } from 'typebox'
import { JOB_STATUSES } from './enums.ts'

/** A `$ref` to a named schema that still carries the schema's static type. */
export const ref = <T extends TSchema & { $id?: string }>(schema: T) => {
  if (!schema.$id) throw new Error('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#` })
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601 timestamp, UTC.' })

const PublishViolationSchema = Type.Object(
  {
    code: Type.String({ description: 'Rule identifier, e.g. MISSING_INDEX, EXTERNAL_URL, IFRAME.' }),
    message: Type.String(),
    path: Type.Optional(Type.String({ description: 'The offending file, when the rule concerns one file.' })),
    detail: Type.Optional(Type.String()),
  },
  { $id: 'PublishViolation', additionalProperties: false },
)

const ErrorSchema = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String({ description: 'Stable machine-readable code.' }),
        message: Type.String({ description: 'Human-readable explanation.' }),
        fields: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Per-field validation messages.' })),
        violations: Type.Optional(Type.Array(ref(PublishViolationSchema), { description: 'Every authoring rule the bundle broke (PUBLISH_INVALID).' })),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'Error', additionalProperties: false, description: 'Envelope of every non-2xx response.' },
)

export const JobStatusSchema = Type.Enum(JOB_STATUSES, { $id: 'JobStatus', description: 'Status of a job and of the version it produces.' })

/** Schemas to register with app.addSchema so that ref() resolves and OpenAPI names them. */
export const SHARED_SCHEMAS = [PublishViolationSchema, ErrorSchema, JobStatusSchema]
