/**
 * The shape of one bundle file as a publish request sends it: the single definition behind the
 * request schemas of createWebsite and createWebsiteVersion, their MCP twins, and the pipeline's
 * input type.
 */
import { type Static, Type } from 'typebox'
import { CONTENT_TYPE_MAX_CHARS, ID_MAX_CHARS, MAX_PATH_CHARS } from '../core/limits.ts'
import { CONTENT_TYPE_PATTERN } from '../core/media-types.ts'
import { ref } from '../core/schemas.ts'

export const PublishFileSchema = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      maxLength: MAX_PATH_CHARS,
      description: 'Relative path within the bundle, e.g. `index.html`, `assets/site.css`, `images/logo.png`.',
    }),
    content: Type.Optional(Type.String({ description: 'UTF-8 text by default; base64 text when contentEncoding is `base64`.' })),
    // No schema default: it would be filled in on files given by uploadId or sha256 too.
    contentEncoding: Type.Optional(
      Type.Enum(['utf8', 'base64'], {
        description: 'How content is encoded: `utf8` (the default) or `base64` (for images and other binaries). Only with content.',
      }),
    ),
    contentType: Type.Optional(
      Type.String({
        maxLength: CONTENT_TYPE_MAX_CHARS,
        pattern: CONTENT_TYPE_PATTERN,
        description: 'MIME type override; inferred from the extension when omitted.',
      }),
    ),
    uploadId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: ID_MAX_CHARS,
        description: 'Instead of content: the bytes PUT to this upload (`upl_...`, from createUploads), yours, complete and unexpired.',
      }),
    ),
    sha256: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        description:
          'Instead of content: the SHA-256 (lowercase hex) of bytes you already published or hold in an open draft (of a site you own or edit), or uploaded. Unknown hashes are PUBLISH_INVALID / UNKNOWN_HASH.',
      }),
    ),
  },
  {
    $id: 'PublishFile',
    additionalProperties: false,
    description:
      'One bundle file. Give exactly one of content, uploadId and sha256 (contentEncoding only with content); otherwise the request is refused with VALIDATION_FAILED naming `files[i]`. Files given by uploadId or sha256 are checked against every limit and authoring rule exactly like inline ones.',
  },
)

/** A bundle file as a publish request gives it: exactly one of content, uploadId and sha256. */
export type PublishFileInput = Static<typeof PublishFileSchema>

/** The `vendor` field of every publish request (createWebsite, createWebsiteVersion, a draft's publish). */
export const VendorField = Type.Optional(
  Type.Boolean({
    description:
      'Default false. True brings the external files the pages and stylesheets name (`<script src>`, stylesheets, preloads, icons, `<img src|srcset>`, CSS `url()` and `@import`, and what fetched stylesheets name in turn) into the bundle under `_vendor/{host}/...` and rewrites each reference to the copy: Plinth fetches them itself, from public http(s) addresses only, within the bundle limits and a time limit. A file that cannot be brought in refuses the publish (422 PUBLISH_INVALID, one VENDOR_* violation naming each URL); nothing is stored. The result lists each file brought in (`vendored`).',
  }),
)

export const VendoredFileSchema = Type.Object(
  {
    url: Type.String({ description: 'The URL the file was fetched from, as the bundle named it.' }),
    path: Type.String({ description: 'Where its copy is in the bundle (`_vendor/{host}/...`).' }),
    bytes: Type.Integer({ description: 'Its size.' }),
  },
  { $id: 'VendoredFile', additionalProperties: false, description: 'An external file brought into the bundle by `vendor: true`.' },
)

/** The `vendored` field of a publish result: present when the request asked `vendor: true`. */
export const VendoredField = Type.Optional(
  Type.Array(ref(VendoredFileSchema), {
    description: 'Present when the publish asked `vendor: true`: each external file brought into the bundle (empty when none was named).',
  }),
)

export const FormFieldSchema = Type.Object(
  {
    name: Type.String(),
    type: Type.String({ description: '`text`, `email`, `tel`, `date`, `file`, ... for inputs; `select` or `textarea`.' }),
    required: Type.Boolean(),
  },
  { $id: 'FormField', description: 'A field of a form on a published page.' },
)

export const FormDeclarationSchema = Type.Object(
  {
    name: Type.String({ description: 'The form posts to `/_forms/{name}` on the site.' }),
    fields: Type.Array(ref(FormFieldSchema), { description: 'Its named fields; controls (`_next`, `_gotcha`) are not listed.' }),
  },
  { $id: 'FormDeclaration' },
)

/** The `forms` field of a publish result. */
export const PublishedFormsField = Type.Optional(
  Type.Array(ref(FormDeclarationSchema), {
    description:
      'The forms the pages declare (`<form method="post" action="/_forms/{name}">`), which the site takes submissions for while this version is served. Absent when there are none.',
  }),
)

/** The named schemas of the forms a publish finds. */
export const FORM_DECLARATION_SCHEMAS = [FormFieldSchema, FormDeclarationSchema]
