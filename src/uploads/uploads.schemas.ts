import { type Static, Type } from 'typebox'
import { type BundleLimits, CONTENT_TYPE_MAX_CHARS, formatSize, ID_MAX_CHARS, UPLOAD_FILENAME_MAX_CHARS, UPLOAD_URL_LIFETIME_MS } from '../core/limits.ts'
import { CONTENT_TYPE_PATTERN } from '../core/media-types.ts'
import { ref, Timestamp } from '../core/schemas.ts'

export const UploadIdParam = Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'Upload id (upl_...).' })

/** createUploads' request: as many files as a bundle may hold, each of at most a bundle file's size. */
export const createUploadsRequestSchema = ({ maxFiles, maxFileBytes }: BundleLimits) =>
  Type.Object(
    {
      files: Type.Array(
        Type.Object(
          {
            filename: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: UPLOAD_FILENAME_MAX_CHARS,
                pattern: '^[^\\u0000-\\u001f\\u007f/\\\\]+$',
                description: 'Name of the file, without folders; kept for importAsset and used to pick the type when contentType is omitted.',
              }),
            ),
            contentType: Type.Optional(
              Type.String({ maxLength: CONTENT_TYPE_MAX_CHARS, pattern: CONTENT_TYPE_PATTERN, description: 'MIME type of the bytes.' }),
            ),
            size: Type.Integer({
              minimum: 1,
              maximum: maxFileBytes,
              description: `Exact size in bytes, 1 to ${maxFileBytes} (${formatSize(maxFileBytes)}). The PUT must send exactly this many.`,
            }),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: maxFiles, description: `1 to ${maxFiles} files to reserve.` },
      ),
    },
    { $id: 'CreateUploadsRequest', additionalProperties: false },
  )

const UploadSchema = Type.Object(
  {
    uploadId: Type.String({
      description:
        'Use it as the uploadId of a bundle file (createWebsite, createWebsiteVersion), in importAsset, or as an image of an entry (upload:{uploadId}) once the bytes are PUT.',
    }),
    uploadUrl: Type.String({ format: 'uri', description: 'Where to PUT the bytes, without a bearer token: the signature in the URL is the credential.' }),
    method: Type.Literal('PUT'),
    headers: Type.Record(Type.String(), Type.String(), { description: 'Headers to send with the PUT (Content-Type when one was declared).' }),
    expiresAt: Timestamp,
    size: Type.Integer({ description: 'The number of bytes the PUT must send.' }),
  },
  { $id: 'Upload', description: `A reserved upload: PUT the bytes to uploadUrl before expiresAt (${UPLOAD_URL_LIFETIME_MS / 60_000} minutes).` },
)

export const CreateUploadsResultSchema = Type.Object(
  { uploads: Type.Array(ref(UploadSchema), { description: 'One per requested file, in request order.' }) },
  { $id: 'CreateUploadsResult' },
)

export const UploadContentResultSchema = Type.Object(
  {
    uploadId: Type.String(),
    sha256: Type.String({ description: 'SHA-256 of the bytes (lowercase hex); a later publish may also name them by this hash.' }),
    size: Type.Integer(),
  },
  { $id: 'UploadContentResult' },
)

/** The named schemas of uploads, for these bundle limits. */
export const uploadSchemas = (limits: BundleLimits) => [createUploadsRequestSchema(limits), UploadSchema, CreateUploadsResultSchema, UploadContentResultSchema]

export type CreateUploadsRequest = Static<ReturnType<typeof createUploadsRequestSchema>>
export type CreateUploadsResult = Static<typeof CreateUploadsResultSchema>
export type UploadContentResult = Static<typeof UploadContentResultSchema>
