/**
 * Renders every failure as the error envelope: AppError from services, schema validation,
 * body parsing, unknown routes and wrong methods, and internal faults (logged, never leaked).
 */
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, type ErrorCode, fieldName } from '../core/errors.ts'
import { MAX_ERROR_FIELDS } from '../core/limits.ts'
import { clipped } from '../core/text.ts'
import { statusOf } from './error-status.ts'
import { rateLimitHeaders } from './rate-limit-headers.ts'

interface AjvIssue {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
}

/** An unknown path is echoed in the message up to this many characters. */
const ECHOED_PATH_MAX = 200

/** The property an issue names beyond its instance path: a missing or unknown one, or a discriminated union's tag (`op`). */
function propertyOf(issue: AjvIssue): string | undefined {
  const { missingProperty, additionalProperty, tag } = issue.params
  const name = missingProperty ?? additionalProperty ?? (issue.keyword === 'discriminator' ? tag : undefined)
  return typeof name === 'string' ? name : undefined
}

/** `/files/0/path` + missing `content` -> `files[0].content` */
function issueField(issue: AjvIssue): string {
  const segments = issue.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  const extra = propertyOf(issue)
  if (extra !== undefined) segments.push(extra)
  return fieldName(segments)
}

/** What an issue says of its field; `unknown`: what a property the schema does not name is (a field, a query parameter). */
function issueMessage(issue: AjvIssue, unknown = 'field'): string {
  switch (issue.keyword) {
    case 'required':
      return 'is required'
    case 'additionalProperties':
      return `is not an accepted ${unknown}`
    case 'enum':
      return `must be one of ${(issue.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    case 'discriminator':
      return issue.params.tagValue === undefined ? 'is required' : `is ${JSON.stringify(issue.params.tagValue)}, which is none of the values it may take`
    default:
      return issue.message ?? 'is invalid'
  }
}

/**
 * For each value that matched no branch of an `anyOf` (a version number or an id, say), what each
 * branch asked of it, by instance path: `must be integer, or must be string`. Each branch reports
 * its own issue at that path before the `anyOf` issue itself; naming only the first would tell
 * the caller that one kind of value is the only one taken.
 */
function unionMessages(issues: readonly AjvIssue[]): Map<string, string> {
  const found = new Map<string, string>()
  for (const [i, issue] of issues.entries()) {
    if (issue.keyword !== 'anyOf') continue
    const branches = new Set<string>()
    for (let j = i - 1; j >= 0 && issues[j]!.instancePath === issue.instancePath && issues[j]!.keyword !== 'anyOf'; j--) {
      if (propertyOf(issues[j]!) === undefined) branches.add(issueMessage(issues[j]!))
    }
    if (branches.size > 1) found.set(issue.instancePath, [...branches].reverse().join(', or '))
  }
  return found
}

export function validationError(issues: AjvIssue[], unknown = 'field'): AppError {
  const fields: Record<string, string> = {}
  let count = 0
  const unions = unionMessages(issues)
  for (const issue of issues) {
    const name = issueField(issue)
    // A field is named once, with its first issue. Object.hasOwn, not ??=: an unknown field may
    // be called "constructor" or "toString".
    if (Object.hasOwn(fields, name)) continue
    if (count === MAX_ERROR_FIELDS) break
    fields[name] = (propertyOf(issue) === undefined ? unions.get(issue.instancePath) : undefined) ?? issueMessage(issue, unknown)
    count++
  }
  const list = Object.entries(fields).map(([k, v]) => `${k} ${v}`)
  return new AppError('VALIDATION_FAILED', `Invalid request: ${list.slice(0, 5).join('; ')}${list.length > 5 ? '; ...' : ''}`, { fields })
}

const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 'The request body is larger than the service accepts.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['INVALID_JSON', 'The request declares a JSON body but sends none.'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['INVALID_JSON', 'The request body is not valid JSON.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['BAD_REQUEST', 'The Content-Length header does not match the body.'],
  // @fastify/multipart, on the dashboard's .zip form.
  FST_REQ_FILE_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 'The file sent is larger than the service accepts.'],
  FST_FILES_LIMIT: ['PAYLOAD_TOO_LARGE', 'The form sends more files than it has fields for: send one .zip.'],
  FST_PARTS_LIMIT: ['PAYLOAD_TOO_LARGE', 'The form sends more parts than it has fields.'],
  FST_FIELDS_LIMIT: ['PAYLOAD_TOO_LARGE', 'The form sends more fields than it has.'],
  FST_INVALID_MULTIPART_CONTENT_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'Send the form as multipart/form-data.'],
}

/** The AppError a failure is, when it is one the client caused (AppError, schema, body parsing, any 4xx); null for a fault of ours. */
export function toAppError(error: FastifyError): AppError | null {
  if (error instanceof AppError) return error
  // An empty path parameter (`.../diff/`) names nothing, as an unknown one does.
  if (error.validation && error.validationContext === 'params' && error.validation.every((issue) => issue.keyword === 'minLength')) {
    return new AppError('NOT_FOUND', 'No resource has this address: a path parameter is empty.')
  }
  if (error.validation) return validationError(error.validation, error.validationContext === 'querystring' ? 'query parameter' : 'field')
  const known = error.code ? FASTIFY_CODES[error.code] : undefined
  if (known) return new AppError(known[0], known[1])
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return new AppError('INVALID_JSON', `The request body is not valid JSON: ${error.message}`)
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return new AppError('BAD_REQUEST', error.message)
  return null
}

/** What a fault of ours is answered with; the fault itself is logged, never shown. */
export const internalError = (): AppError => new AppError('INTERNAL', 'Something went wrong on our side. The error was logged; retry later.')

/**
 * An AppError raised by the HTTP layer itself with headers only HTTP has (WWW-Authenticate, Allow):
 * what an authentication hook or the router answers, never a service.
 */
export class HttpError extends AppError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    super(code, message)
  }
}

/** The response headers an error is answered with: when to retry, the rate limit's state, and an HttpError's own. */
export function errorHeaders(error: AppError): Record<string, string> {
  return {
    ...(error.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(error.retryAfterSeconds) }),
    ...(error.rateLimit ? rateLimitHeaders(error.rateLimit) : {}),
    ...(error instanceof HttpError ? error.headers : {}),
  }
}

function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  return reply.code(statusOf(error)).headers(errorHeaders(error)).type('application/json; charset=utf-8').send(error.toEnvelope())
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them get the envelope too: a malformed
 * request line, header or chunk; headers and URL together over the 16 KiB Node reads; a request
 * slower than Node's timeouts (60 s for its headers, 5 minutes in all). The connection is then
 * closed: what follows on it cannot be read as a request.
 */
export function clientErrors(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const refusal = clientRefusal(error.code)
  const body = JSON.stringify(refusal.toEnvelope())
  const status = statusOf(refusal)
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

function clientRefusal(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('HEADERS_TOO_LARGE', "The request's headers and URL are larger than the service reads (16 KiB): shorten the URL or the headers.")
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('REQUEST_TIMEOUT', 'The request took too long to arrive: its headers more than 60 seconds, or the whole of it more than 5 minutes.')
    default:
      return new AppError('BAD_REQUEST', 'The request is not valid HTTP/1.1 and was not read.')
  }
}

/**
 * Failures the router answers before any route, hook or error handler runs: a path parameter that
 * is not valid percent-encoding or longer than the router accepts (100 characters). Such a path
 * names no resource, so it is 404 NOT_FOUND in the envelope like any other unknown id.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendError(reply, new AppError('NOT_FOUND', 'No resource has this address: a path parameter is malformed or too long.'))
    return
  }
  sendError(reply, toAppError(error) ?? internalError())
}

/** Every failure as the envelope: the error handler of the API, and of JSON routes inside a scope that answers with pages. */
export function answerWithEnvelope(error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = error instanceof AppError ? error : toAppError(error)
  if (appError) return sendError(reply, appError)
  request.log.error({ err: error }, 'unhandled error')
  return sendError(reply, internalError())
}

const ROUTE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

export interface ErrorHandlingOptions {
  /** Answers an unknown path itself (the web site's 404 page), or returns null for the envelope. */
  notFound?: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | null
}

export function registerErrorHandling(app: FastifyInstance, options: ErrorHandlingOptions = {}): void {
  app.setErrorHandler(answerWithEnvelope)

  app.setNotFoundHandler(
    (request, reply) =>
      options.notFound?.(request, reply) ??
      sendError(reply, new AppError('NOT_FOUND', `No route ${request.method} ${clipped(request.url.split('?')[0]!, ECHOED_PATH_MAX)}.`)),
  )

  // A known path with an unsupported method is 405 with Allow, not 404. Routes are collected as
  // they are added; answerWrongMethods() registers the 405 routes once all are known.
  // Keyed by the path's shape: `entries/:entry` (GET) and `entries/:slug` (PUT) are one path to
  // the router, which refuses a second PUT there.
  const methodsByUrl = new Map<string, Set<string>>()
  const urlByShape = new Map<string, string>()
  app.addHook('onRoute', (route) => {
    if (route.config && (route.config as { wrongMethod?: boolean }).wrongMethod) return
    const shape = route.url.replace(/:[^/]+/g, ':')
    const methods = methodsByUrl.get(shape) ?? new Set<string>()
    for (const m of [route.method].flat()) methods.add(m)
    methodsByUrl.set(shape, methods)
    if (!urlByShape.has(shape)) urlByShape.set(shape, route.url)
  })
  app.decorate('answerWrongMethods', () => {
    for (const [shape, methods] of methodsByUrl) {
      const url = urlByShape.get(shape)!
      const others = ROUTE_METHODS.filter((m) => !methods.has(m))
      if (others.length === 0) continue
      const allow = [...methods].join(', ')
      app.route({
        method: others,
        url,
        config: { wrongMethod: true },
        schema: { hide: true },
        handler: (_request, reply) => sendError(reply, new HttpError('METHOD_NOT_ALLOWED', `This path accepts ${allow} only.`, { Allow: allow })),
      })
    }
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    answerWrongMethods(): void
  }
}
