import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { FORM_SUBMISSION_LIMITS } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH as security, BODY_ERRORS, errorResponses, success } from '../http/openapi.ts'
import { queryNumbers } from '../http/query-numbers.ts'
import { WebsiteIdParam, WebsiteParams } from '../websites/websites.schemas.ts'
import type { FormsService } from './forms.service.ts'
import {
  DeletedSubmissionsSchema,
  FormListSchema,
  FormNameParam,
  FormSettingsSchema,
  FormSubmissionSchema,
  SubmissionIdParam,
  SubmissionListSchema,
  SubmissionQuery,
} from './forms.schemas.ts'

const tags = ['Forms']
const FormParams = Type.Object({ websiteId: WebsiteIdParam, name: FormNameParam })
const SubmissionParams = Type.Object({ websiteId: WebsiteIdParam, name: FormNameParam, submissionId: SubmissionIdParam })
const FileParams = Type.Object({
  websiteId: WebsiteIdParam,
  name: FormNameParam,
  submissionId: SubmissionIdParam,
  position: Type.Integer({ minimum: 0, maximum: FORM_SUBMISSION_LIMITS.maxFiles - 1, description: 'The file’s place among the submission’s files, from 0.' }),
})
const SpamBody = Type.Object({ spam: Type.Boolean({ description: 'Whether it is spam.' }) }, { additionalProperties: false })
const ErasureBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254, description: 'The visitor’s e-mail address, as they gave it in a form.' }) },
  { additionalProperties: false },
)
const READ_ERRORS = errorResponses([...AUTH_ERRORS, 'NOT_FOUND', 'VALIDATION_FAILED'])

/** Forms and their submissions, under /v1 (authenticated): owners and editors read and delete them; anyone else gets 404. */
export function formsRoutes({ forms }: { forms: FormsService }): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    const base = '/websites/:websiteId/forms'
    const submissions = `${base}/:name/submissions`

    app.get(
      base,
      {
        schema: {
          operationId: 'listForms',
          tags,
          security,
          summary: "List a site's forms",
          description:
            'The forms the live version declares (`<form method="post" action="/_forms/{name}">`), with their fields, how many submissions each has and when the last came; then any other form with stored submissions.',
          params: WebsiteParams,
          response: { 200: success(FormListSchema, 'The forms.'), ...READ_ERRORS },
        },
      },
      async (request) => forms.listForms(principalOf(request), request.params.websiteId),
    )

    app.get(
      submissions,
      {
        preValidation: queryNumbers('limit'),
        schema: {
          operationId: 'listFormSubmissions',
          tags,
          security,
          summary: "List a form's submissions",
          description: 'Newest first, a page at a time (`nextCursor`); `q` keeps those whose values contain a text.',
          params: FormParams,
          querystring: SubmissionQuery,
          response: { 200: success(SubmissionListSchema, 'A page of submissions.'), ...READ_ERRORS },
        },
      },
      async (request) => forms.listSubmissions(principalOf(request), request.params.websiteId, request.params.name, request.query),
    )

    app.get(
      `${submissions}.csv`,
      {
        schema: {
          operationId: 'exportFormSubmissions',
          tags,
          security,
          summary: "A form's submissions as CSV",
          description:
            "Every submission, oldest first, as `text/csv`: `id`, `createdAt`, `spam`, one column per field, `files`. A value starting with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'` so that a spreadsheet does not run it.",
          params: FormParams,
          response: READ_ERRORS,
        },
      },
      async (request, reply) => {
        const { filename, csv } = await forms.exportCsv(principalOf(request), request.params.websiteId, request.params.name)
        return reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${filename}"`).send(csv)
      },
    )

    app.delete(
      submissions,
      {
        schema: {
          operationId: 'deleteFormSubmissions',
          tags,
          security,
          summary: "Delete all of a form's submissions",
          params: FormParams,
          response: { 200: success(DeletedSubmissionsSchema, 'How many were deleted.'), ...READ_ERRORS },
        },
      },
      async (request) => forms.deleteAll(principalOf(request), request.params.websiteId, request.params.name),
    )

    app.get(
      `${submissions}/:submissionId`,
      {
        schema: {
          operationId: 'getFormSubmission',
          tags,
          security,
          summary: 'Get one submission',
          params: SubmissionParams,
          response: { 200: success(FormSubmissionSchema, 'The submission.'), ...READ_ERRORS },
        },
      },
      async (request) => forms.getSubmission(principalOf(request), request.params.websiteId, request.params.name, request.params.submissionId),
    )

    app.patch(
      `${submissions}/:submissionId`,
      {
        schema: {
          operationId: 'markFormSubmission',
          tags,
          security,
          summary: 'Mark a submission as spam, or not',
          params: SubmissionParams,
          body: SpamBody,
          response: { 200: success(FormSubmissionSchema, 'The submission.'), ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND']) },
        },
      },
      async (request) => {
        const { websiteId, name, submissionId } = request.params
        await forms.setSpam(principalOf(request), websiteId, name, submissionId, request.body.spam)
        return forms.getSubmission(principalOf(request), websiteId, name, submissionId)
      },
    )

    app.delete(
      `${submissions}/:submissionId`,
      {
        schema: {
          operationId: 'deleteFormSubmission',
          tags,
          security,
          summary: 'Delete one submission',
          params: SubmissionParams,
          response: { 204: Type.Null({ description: 'Deleted, with its files.' }), ...READ_ERRORS },
        },
      },
      async (request, reply) => {
        await forms.deleteSubmission(principalOf(request), request.params.websiteId, request.params.name, request.params.submissionId)
        return reply.code(204).send(null)
      },
    )

    app.get(
      `${submissions}/:submissionId/files/:position`,
      {
        preValidation: (request, _reply, done) => {
          const params = request.params as Record<string, unknown>
          if (typeof params.position === 'string' && /^\d{1,3}$/.test(params.position)) params.position = Number(params.position)
          done()
        },
        schema: {
          operationId: 'getFormSubmissionFile',
          tags,
          security,
          summary: 'Download a file sent with a submission',
          description: 'The bytes as the visitor sent them, always as an attachment (never shown in the browser). Owners and editors.',
          params: FileParams,
          response: READ_ERRORS,
        },
      },
      async (request, reply) => {
        const { websiteId, name, submissionId, position } = request.params
        const file = await forms.file(principalOf(request), websiteId, name, submissionId, position)
        return reply
          .type('application/octet-stream')
          .header('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.filename || 'file')}`)
          .header('X-Content-Type-Options', 'nosniff')
          .send(file.bytes)
      },
    )

    app.get(
      '/websites/:websiteId/form-settings',
      {
        schema: {
          operationId: 'getFormSettings',
          tags,
          security,
          summary: "A site's form settings",
          params: WebsiteParams,
          response: { 200: success(FormSettingsSchema, 'Who is e-mailed each submission, and how long submissions are kept.'), ...READ_ERRORS },
        },
      },
      async (request) => forms.settings(principalOf(request), request.params.websiteId),
    )

    app.put(
      '/websites/:websiteId/form-settings',
      {
        schema: {
          operationId: 'setFormSettings',
          tags,
          security,
          summary: "Set a site's form settings (owner only)",
          description: 'A retention deletes the submissions older than it at once, and then daily.',
          params: WebsiteParams,
          body: ref(FormSettingsSchema),
          response: { 200: success(FormSettingsSchema, 'The settings now.'), ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND', 'OWNER_ONLY']) },
        },
      },
      async (request) => forms.updateSettings(principalOf(request), request.params.websiteId, request.body),
    )

    app.post(
      '/websites/:websiteId/form-erasures',
      {
        schema: {
          operationId: 'eraseFormSubmissions',
          tags,
          security,
          summary: "Delete every submission a visitor's e-mail address gave",
          description: 'For a visitor who asks to be forgotten: every submission of any form of the site whose sender gave this address, with its files.',
          params: WebsiteParams,
          body: ErasureBody,
          response: { 200: success(DeletedSubmissionsSchema, 'How many were deleted.'), ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'NOT_FOUND']) },
        },
      },
      async (request) => forms.deleteByEmail(principalOf(request), request.params.websiteId, request.body.email),
    )
  }
}
