import type { FastifyReply, FastifyRequest, FastifySchema, HookHandlerDoneFunction } from 'fastify'
import { type Static, type TSchema, Type } from 'typebox'
import { TOKEN_SCOPE } from '../core/enums.ts'
import type { ErrorCode } from '../core/errors.ts'
import { DRAFTS_PER_SITE, MAX_COLLECTIONS } from '../core/limits.ts'
import { ERROR_STATUS } from './error-status.ts'

/** Declared on the bearer scheme and in each operation's security requirement (OpenAPI 3.1 allows role names there for non-OAuth schemes). */
export { TOKEN_SCOPE }

/** The security requirement of every operation that takes a bearer token. */
export const BEARER_AUTH = [{ bearerAuth: [TOKEN_SCOPE] }]

/** Marks an operation whose body may be left out (see OPTIONAL_BODY); read and removed by optionalBodies. */
const OPTIONAL_BODY_KEYWORD = 'x-plinth-optional-body'

/**
 * For a POST whose fields are all optional: spread into its route options, it lets the request
 * come without a body, standing for `{}`, and the document says so (`requestBody.required:
 * false`, where @fastify/swagger writes true for every body), so generated clients need not send one.
 */
export const OPTIONAL_BODY = {
  preValidation: (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    request.body ??= {}
    done()
  },
  schema: { [OPTIONAL_BODY_KEYWORD]: true },
}

/** The document with each operation marked by OPTIONAL_BODY given an optional request body. */
export function optionalBodies<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, Record<string, unknown>>> }).paths ?? {}
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      if (operation?.[OPTIONAL_BODY_KEYWORD] === undefined) continue
      delete operation[OPTIONAL_BODY_KEYWORD]
      const body = operation.requestBody as { required?: boolean } | undefined
      if (body) body.required = false
    }
  }
  return document
}

/**
 * A success response: a `$ref` to a named schema (keeping its static type) with the description
 * the document gives the response; without one @fastify/swagger writes "Default Response".
 */
export const success = <T extends TSchema & { $id?: string }>(schema: T, description: string) => {
  if (!schema.$id) throw new Error('success() needs a schema with an $id')
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#`, description })
}

const MEANING: Record<ErrorCode, string> = {
  BAD_REQUEST: 'the request is malformed',
  INVALID_JSON: 'the body is not valid JSON (or not UTF-8)',
  AUTH_REQUIRED: 'missing, invalid, expired or revoked token (see WWW-Authenticate)',
  TOKEN_NOT_ALLOWED: 'the token does not reach this surface (REST or MCP)',
  SIGN_IN_FAILED: 'web site only: the email or the password of a sign-in is not right',
  SIGNUP_CLOSED: 'web site only: sign-up is closed on this instance (PLINTH_SIGNUP=closed)',
  ORIGIN_NOT_ALLOWED: "a browser request to /mcp from a page that is not Plinth's own origin (DNS-rebinding protection)",
  OWNER_ONLY: "only the website's owner may do this; editors may not",
  WEBSITE_LIMIT_REACHED: 'the account has as many websites as it may have',
  COLLECTION_LIMIT_REACHED: `the website has as many collections as it may have (${MAX_COLLECTIONS})`,
  DRAFT_LIMIT_REACHED: `the website has as many open drafts as it may have (${DRAFTS_PER_SITE}); publish or discard one`,
  UPLOAD_URL_INVALID: 'the upload URL is not one the service signed (signature or expiry altered)',
  UPLOAD_URL_EXPIRED: 'the upload URL has expired; reserve a new upload',
  NOT_FOUND: 'no such resource visible to the caller',
  METHOD_NOT_ALLOWED: 'the path does not accept this method (see Allow)',
  SLUG_TAKEN: 'the requested slug is taken or reserved; the message names a free one',
  COLLECTION_EXISTS: 'the website already has a collection of this name',
  COLLECTION_CONFLICT:
    "the collection's reserved paths ({name}-*, {name}, {name}.html, {name}/, {name}.json, {name}.xml) clash with files of the live version; the message names them",
  FIELD_IN_USE: 'a field cannot change type while entries hold values for it',
  PROMOTE_CONFLICT:
    'the version has files where a collection created since serves its entries, listing or feeds ({name}-*, {name}, {name}.html, {name}/, {name}.json, {name}.xml); the message names the files and the collection',
  VERSION_CONFLICT:
    'a version newer than the base of the draft or patch exists; the message and error.fields name the newer versions and the files they changed (publish anyway with overwrite: true, or rebase on the newest)',
  ALREADY_LIVE: 'the version asked for is the live one already',
  NOT_PENDING: 'the promotion request or schedule is no longer pending: decided, run or cancelled already',
  UPLOAD_COMPLETED: 'the bytes of this upload were already received; an upload is written once',
  PAYLOAD_TOO_LARGE: 'the body is larger than the service accepts',
  REQUEST_TIMEOUT: 'the request took too long to arrive (its headers over 60 seconds, the whole of it over 5 minutes): the connection is closed',
  HEADERS_TOO_LARGE: "the request's headers and URL are larger than the service reads (16 KiB): the connection is closed",
  UNSUPPORTED_MEDIA_TYPE: 'the body is not application/json',
  VALIDATION_FAILED: 'the request breaks its schema; error.fields names each bad field',
  PUBLISH_INVALID: 'the bundle breaks authoring rules; error.violations lists every one',
  ARCHIVE_INVALID:
    'a .zip sent to the dashboard cannot be unpacked safely (not a zip, too many entries, a path leaving the folder, a symbolic link, more bytes than a bundle may hold); the message says which',
  EDIT_NO_MATCH: "an edit's oldText occurs nowhere in the file; the message names the edit, the file and the closest line, and nothing was changed",
  EDIT_AMBIGUOUS: "an edit's oldText occurs more than once in the file; the message names the edit, the file and the count, and nothing was changed",
  FETCH_FAILED:
    'a URL could not be fetched safely (blocked address, bad scheme, HTTP error, timeout, too large, too many redirects, not an accepted image); the message says which',
  IMAGE_IMPORT_FAILED: 'an image of the entry could not be imported into the image library; error.fields names the field',
  RICH_TEXT_TOO_COSTLY: 'rendering the rich text of the entry took longer or needed more memory than its limit and was stopped; error.fields names the field',
  PAGE_UNRESPONSIVE: 'the page kept the browser busy past its time limit (a script that never ends?) and was stopped',
  RATE_LIMITED: 'too many publishes; retry after Retry-After seconds',
  INTERNAL: 'unexpected fault on the server',
  BROWSER_UNAVAILABLE: 'this instance has no browser to load pages in (PLINTH_BROWSER is off, or names no executable); the message says how to enable one',
  BROWSER_BUSY: 'the browser has as many pages waiting as it takes; retry after Retry-After seconds',
}

/** Codes any authenticated JSON route may return. */
export const AUTH_ERRORS: ErrorCode[] = ['AUTH_REQUIRED', 'TOKEN_NOT_ALLOWED', 'INTERNAL']
/** Codes any route with a JSON body may return on top. */
export const BODY_ERRORS: ErrorCode[] = ['INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'VALIDATION_FAILED']

/** Response schemas for the given error codes, grouped by status, each naming its codes. */
export function errorResponses(codes: ErrorCode[]): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code]
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [status, Type.Unsafe({ $ref: 'Error#', description: list.map((c) => `\`${c}\`: ${MEANING[c]}`).join('; ') })]),
  )
}

interface ParamsSchema {
  properties: Record<string, unknown>
  required?: string[]
}

/**
 * The document's view of a route whose path ends in a wildcard (a file's path after `/files/`, its
 * slashes as they are): the router names that parameter `*`, the document `{path}`. Other routes
 * are left as they are.
 */
export function wildcardAsPath({ schema, url }: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  // Routes without a schema (hidden ones) come with none.
  const params = (schema as FastifySchema | undefined)?.params as ParamsSchema | undefined
  if (!url.endsWith('/*') || !params?.properties['*']) return { schema, url }
  const { '*': wildcard, ...others } = params.properties
  const required = [...(params.required ?? []).filter((name) => name !== '*'), 'path']
  return { schema: { ...schema, params: { ...params, properties: { ...others, path: wildcard }, required } }, url: `${url.slice(0, -1)}{path}` }
}
