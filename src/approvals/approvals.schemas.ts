/** Shapes of promotion requests, schedules and preview expiry: the single source for validation, types and OpenAPI. */
import { type Static, Type } from 'typebox'
import { PROMOTION_REQUEST_STATUSES, SCHEDULE_STATUSES } from '../core/enums.ts'
import { DATE_TIME_MAX_CHARS, ID_MAX_CHARS } from '../core/limits.ts'
import { Nullable, ref, Timestamp } from '../core/schemas.ts'

/** Longest note of a request and reason of a decline. */
export const PROMOTION_NOTE_MAX_CHARS = 2000

export const RequestIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Promotion request id (prq_...).' })
export const ScheduleIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Schedule id (sch_...).' })

export const PromotionRequestStatusSchema = Type.Enum(PROMOTION_REQUEST_STATUSES, {
  $id: 'PromotionRequestStatus',
  description:
    '`pending` until a person decides on the dashboard; `approved` (the version went live), `declined` (see reason) or `cancelled` (withdrawn before anyone decided).',
})

export const PromotionRequestInputSchema = Type.Object(
  { note: Type.Optional(Type.String({ maxLength: PROMOTION_NOTE_MAX_CHARS, description: 'What the people deciding should know: what changed and why.' })) },
  { $id: 'PromotionRequestInput', additionalProperties: false },
)

export const PromotionRequestSchema = Type.Object(
  {
    requestId: Type.String({ description: 'prq_...' }),
    websiteId: Type.String(),
    versionId: Type.String({ description: 'The version asked to go live (job_...).' }),
    version: Type.Integer({ description: 'Its number.' }),
    status: ref(PromotionRequestStatusSchema),
    note: Nullable(Type.String()),
    previewUrl: Type.String({ description: 'Where the version is served for review.' }),
    createdAt: Timestamp,
    decidedAt: Type.Optional(Timestamp),
    reason: Type.Optional(Type.String({ description: 'Why it was declined.' })),
  },
  { $id: 'PromotionRequest' },
)

export const PromotionRequestListSchema = Type.Object({ items: Type.Array(ref(PromotionRequestSchema)) }, { $id: 'PromotionRequestList' })

export const PromotionRequestListQuery = Type.Object({ status: Type.Optional(ref(PromotionRequestStatusSchema)) }, { additionalProperties: false })

const dateTimeText = (description: string) => Type.String({ minLength: 1, maxLength: DATE_TIME_MAX_CHARS, description })

/** When a scheduled promotion makes its version live. */
export const PromoteAtParam = dateTimeText(
  'When to make the version live (ISO-8601 with a time zone, such as 2026-12-01T09:00:00Z): within the minute after it, at most a year ahead.',
)

/** The body of promoteWebsiteVersion: none (or `{}`) promotes now; `promoteAt` schedules it. */
export const PromoteRequestSchema = Type.Object({ promoteAt: Type.Optional(PromoteAtParam) }, { $id: 'PromoteRequest', additionalProperties: false })

export const ScheduleStatusSchema = Type.Enum(SCHEDULE_STATUSES, {
  $id: 'ScheduleStatus',
  description: '`pending` until its time, `running` while an instance runs it, then `done`, `failed` (see error) or `cancelled`.',
})

export const ScheduleSchema = Type.Object(
  {
    scheduleId: Type.String({ description: 'sch_...' }),
    versionId: Type.String(),
    promoteAt: Timestamp,
    version: Type.Integer(),
    status: ref(ScheduleStatusSchema),
    createdAt: Timestamp,
    finishedAt: Type.Optional(Timestamp),
    error: Type.Optional(Type.String({ description: 'Why a failed schedule did not promote.' })),
  },
  { $id: 'Schedule' },
)

export const ScheduleListSchema = Type.Object({ items: Type.Array(ref(ScheduleSchema)) }, { $id: 'ScheduleList' })

export const PreviewExpiryInputSchema = Type.Object(
  {
    expiresAt: Nullable(
      dateTimeText(
        'From when the version is no longer served at its preview URL (404 there; its data stays): ISO-8601 with a time zone, in the future. null: served as long as it exists.',
      ),
    ),
  },
  { $id: 'PreviewExpiryInput', additionalProperties: false },
)

export const PreviewExpirySchema = Type.Object(
  {
    versionId: Type.String(),
    version: Type.Integer(),
    previewUrl: Type.String(),
    expiresAt: Nullable(Timestamp),
  },
  { $id: 'PreviewExpiry' },
)

export type PromotionRequest = Static<typeof PromotionRequestSchema>
export type Schedule = Static<typeof ScheduleSchema>
export type PreviewExpiry = Static<typeof PreviewExpirySchema>

export const APPROVAL_SCHEMAS = [
  PromotionRequestStatusSchema,
  PromotionRequestInputSchema,
  PromotionRequestSchema,
  PromotionRequestListSchema,
  PromoteRequestSchema,
  ScheduleStatusSchema,
  ScheduleSchema,
  ScheduleListSchema,
  PreviewExpiryInputSchema,
  PreviewExpirySchema,
]
