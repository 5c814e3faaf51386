import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.routes.ts'
import { type BundleLimits, formatSize, UPLOAD_RETENTION_MS, UPLOAD_URL_LIFETIME_MS } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { AUTH_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses, success } from '../http/openapi.ts'
import { createUploadsRequestSchema, CreateUploadsResultSchema, UploadContentResultSchema, UploadIdParam } from './uploads.schemas.ts'
import type { UploadBody, UploadsService } from './uploads.service.ts'

const tags = ['Uploads']
const minutes = UPLOAD_URL_LIFETIME_MS / 60_000

/** createUploads, under /v1 behind the bearer token; `limits`: the bundle limits uploads follow. */
export function uploadsRoutes(uploads: UploadsService, limits: BundleLimits): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.post(
      '/uploads',
      {
        schema: {
          operationId: 'createUploads',
          tags,
          security: BEARER_AUTH,
          summary: 'Reserve uploads for files too large to inline',
          description: `Reserves 1 to ${limits.maxFiles} files of up to ${formatSize(limits.maxFileBytes)} each. For each, PUT exactly \`size\` bytes to \`uploadUrl\` within ${minutes} minutes (no bearer token: the URL is signed), then give the \`uploadId\` as a bundle file's \`uploadId\` in createWebsite or createWebsiteVersion, to importAsset, or as an image of an entry (\`upload:{uploadId}\`), within ${UPLOAD_RETENTION_MS / 3_600_000} hours. Limits and authoring rules apply to uploaded files exactly as to inline ones.`,
          body: ref(createUploadsRequestSchema(limits)),
          response: {
            201: success(CreateUploadsResultSchema, 'The uploads, each with the URL to PUT its bytes to.'),
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS]),
          },
        },
      },
      async (request, reply) => reply.code(201).send(await uploads.create(principalOf(request), request.body)),
    )
  }
}

/**
 * The PUT of an upload's bytes, under /v1 but outside the bearer-token scope: the signature in
 * the URL is the credential. Raw bodies of any type are taken here only; the rest of the API
 * accepts JSON alone.
 */
export function uploadContentRoutes(uploads: UploadsService, limits: BundleLimits): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app) => {
    app.removeAllContentTypeParsers()
    // The body is handed over unread: the service checks the URL first and then streams it with a hard cap.
    app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
    // A refused PUT leaves its body unread; closing the connection spares reading it to the end.
    app.addHook('onSend', async (request, reply) => {
      if (reply.statusCode >= 400 && !request.raw.complete) reply.header('connection', 'close')
    })

    app.put(
      '/uploads/:uploadId/content',
      {
        schema: {
          operationId: 'putUploadContent',
          tags,
          security: [],
          summary: "Send an upload's bytes (signed URL, no token)",
          description: `The uploadUrl of createUploads. Send the file's raw bytes (any Content-Type), exactly the reserved size (at most ${limits.maxFileBytes} bytes), within ${minutes} minutes of the reservation. No bearer token: the expires and signature query parameters are the credential. An upload is written once: a second PUT is 409 UPLOAD_COMPLETED.`,
          params: Type.Object({ uploadId: UploadIdParam }),
          querystring: Type.Object(
            {
              expires: Type.Optional(Type.String({ maxLength: 20, description: 'Expiry of the URL, Unix seconds (signed).' })),
              signature: Type.Optional(Type.String({ maxLength: 100, description: 'HMAC-SHA256 of the upload id and expiry, base64url.' })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: success(UploadContentResultSchema, 'The bytes are stored: the upload can be given by uploadId.'),
            ...errorResponses([
              'BAD_REQUEST',
              'UPLOAD_URL_INVALID',
              'UPLOAD_URL_EXPIRED',
              'NOT_FOUND',
              'UPLOAD_COMPLETED',
              'PAYLOAD_TOO_LARGE',
              'VALIDATION_FAILED',
              'INTERNAL',
            ]),
          },
        },
      },
      (request) => {
        const declared = request.headers['content-length']
        const body: UploadBody = {
          contentLength: declared === undefined ? null : Number(declared),
          chunks: (request.body as AsyncIterable<Buffer> | undefined) ?? null,
        }
        return uploads.receive(request.params.uploadId, request.query, body)
      },
    )
  }
}
