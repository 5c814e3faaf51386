import { type Static, Type } from 'typebox'
import { ID_MAX_CHARS, URL_MAX_CHARS } from '../core/limits.ts'
import { Nullable } from '../core/schemas.ts'

export const ImportAssetRequestSchema = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: URL_MAX_CHARS,
        description: 'An absolute http(s) URL of the image to copy into the library (or a `data:image/...;base64,` URL).',
      }),
    ),
    uploadId: Type.Optional(
      Type.String({ minLength: 1, maxLength: ID_MAX_CHARS, description: 'A completed upload of yours (createUploads) whose bytes are the image.' }),
    ),
  },
  {
    $id: 'ImportAssetRequest',
    additionalProperties: false,
    description: 'Exactly one of url or uploadId.',
  },
)

export const LibraryAssetSchema = Type.Object(
  {
    id: Type.String({ description: 'Asset id (ast_...).' }),
    url: Type.String({ description: 'Where the site serves the image, site-relative: /_assets/{hash}.{ext}.' }),
    sourceUrl: Nullable(Type.String({ description: 'The URL it was fetched from; null for uploads and inline images.' })),
    contentType: Type.String({ description: 'Sniffed from the bytes: image/png, image/jpeg, image/gif, image/webp or image/avif.' }),
    size: Type.Integer({ description: 'Bytes.' }),
    hash: Type.String({ description: 'SHA-256 of the bytes (hex).' }),
    width: Nullable(Type.Integer({ description: 'Pixels, when the image header gives it.' })),
    height: Nullable(Type.Integer({ description: 'Pixels, when the image header gives it.' })),
  },
  { $id: 'LibraryAsset' },
)

export type ImportAssetRequest = Static<typeof ImportAssetRequestSchema>

export const ASSET_SCHEMAS = [ImportAssetRequestSchema, LibraryAssetSchema]
