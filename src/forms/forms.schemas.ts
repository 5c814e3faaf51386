import { type Static, Type } from 'typebox'
import { FORM_NOTIFY_MODES } from '../core/enums.ts'
import { FORM_NAME_PATTERN } from '../core/form-names.ts'
import {
  FORM_NOTIFY_MAX_ADDRESSES,
  FORM_RETENTION_MAX_DAYS,
  FORM_SEARCH_MAX_CHARS,
  FORM_SUBMISSIONS_PAGE_DEFAULT,
  FORM_SUBMISSIONS_PAGE_MAX,
  ID_MAX_CHARS,
} from '../core/limits.ts'
import { Nullable, PageQuery, ref, Timestamp } from '../core/schemas.ts'
import { FormFieldSchema } from '../publishing/publishing.schemas.ts'

export const FormNameParam = Type.String({ pattern: FORM_NAME_PATTERN.source, description: 'The form: the `{name}` of `/_forms/{name}`.' })
export const SubmissionIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'A submission id (`sub_...`).' })

export const FormSummarySchema = Type.Object(
  {
    name: Type.String(),
    fields: Type.Array(ref(FormFieldSchema), { description: 'Its fields, as the live version declares them (or the last version that did).' }),
    live: Type.Boolean({ description: 'Whether the live version declares it, so that it takes submissions now.' }),
    submissions: Type.Integer({ description: 'Submissions stored.' }),
    lastSubmissionAt: Nullable(Timestamp),
  },
  { $id: 'FormSummary' },
)

export const FormListSchema = Type.Object(
  { items: Type.Array(ref(FormSummarySchema), { description: 'The forms the live version declares, then any other form with stored submissions.' }) },
  { $id: 'FormList' },
)

export const SubmissionFileSchema = Type.Object(
  {
    field: Type.String(),
    filename: Type.String(),
    contentType: Type.String({ description: 'As the visitor’s browser named it.' }),
    size: Type.Integer({ description: 'Bytes.' }),
    url: Type.String({ format: 'uri', description: 'Where owners and editors download it (with their token).' }),
  },
  { $id: 'SubmissionFile' },
)

export const FormSubmissionSchema = Type.Object(
  {
    id: Type.String({ description: '`sub_...`' }),
    form: Type.String(),
    createdAt: Timestamp,
    data: Type.Record(Type.String(), Type.String(), {
      description: 'Field name to value, as the visitor sent them (a field sent more than once has its values joined with ", ").',
    }),
    files: Type.Array(ref(SubmissionFileSchema)),
    spam: Type.Boolean({ description: 'Marked as spam by an owner or editor.' }),
  },
  { $id: 'FormSubmission' },
)

export const SubmissionListSchema = Type.Object(
  {
    items: Type.Array(ref(FormSubmissionSchema), { description: 'Newest first.' }),
    nextCursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null on the last.' })),
  },
  { $id: 'SubmissionList' },
)

export const SubmissionQuery = Type.Object(
  {
    ...PageQuery('Submissions', FORM_SUBMISSIONS_PAGE_MAX, FORM_SUBMISSIONS_PAGE_DEFAULT).properties,
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: FORM_SEARCH_MAX_CHARS, description: 'Only submissions whose values contain this text (any case).' }),
    ),
  },
  { additionalProperties: false },
)

export const DeletedSubmissionsSchema = Type.Object({ deleted: Type.Integer({ description: 'Submissions deleted.' }) }, { $id: 'DeletedSubmissions' })

export const FormSettingsSchema = Type.Object(
  {
    notify: Nullable(
      Type.Array(Type.String({ format: 'email', maxLength: 254 }), {
        maxItems: FORM_NOTIFY_MAX_ADDRESSES,
        description: `Addresses each submission is e-mailed to (at most ${FORM_NOTIFY_MAX_ADDRESSES}; empty: nobody). Null: the site owner's. Only when the instance has SMTP set up.`,
      }),
    ),
    retentionDays: Nullable(
      Type.Integer({ minimum: 1, maximum: FORM_RETENTION_MAX_DAYS, description: 'Days submissions are kept; null keeps them until deleted.' }),
    ),
    notifyMode: Type.Optional(
      Type.Enum(FORM_NOTIFY_MODES, {
        description:
          '`each`: an e-mail per submission (the default). `daily`: instead, one digest a day (after midnight UTC) of the previous day’s submissions, spam left out, one message per address for all its sites; none on a day without submissions. Left out when setting: unchanged.',
      }),
    ),
  },
  { $id: 'FormSettings', additionalProperties: false },
)

export const FORM_SCHEMAS = [
  FormSummarySchema,
  FormListSchema,
  SubmissionFileSchema,
  FormSubmissionSchema,
  SubmissionListSchema,
  DeletedSubmissionsSchema,
  FormSettingsSchema,
]

export type FormSummary = Static<typeof FormSummarySchema>
export type FormList = Static<typeof FormListSchema>
export type FormSubmission = Static<typeof FormSubmissionSchema>
export type SubmissionList = Static<typeof SubmissionListSchema>
export type SubmissionQuery = Static<typeof SubmissionQuery>
export type FormSettings = Static<typeof FormSettingsSchema>
