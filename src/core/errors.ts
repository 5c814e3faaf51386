/**
 * One error model for every surface. Services throw AppError with a stable code and the data a
 * caller acts on (fields, violations, when to retry); they know no HTTP status or header. The HTTP
 * error handler (http/errors.http.ts) renders it as the envelope {error:{code,message,fields?,
 * violations?}} with its status and headers, and MCP tools turn it into an isError result with the
 * same content.
 */
import { clipped } from './text.ts'

export interface PublishViolation {
  code: string
  message: string
  path?: string
  detail?: string
}

/** Every error code Plinth returns; its HTTP status is the HTTP layer's (http/error-status.ts). */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'INVALID_JSON'
  | 'AUTH_REQUIRED'
  | 'SIGN_IN_FAILED'
  | 'TOKEN_NOT_ALLOWED'
  | 'SIGNUP_CLOSED'
  | 'ORIGIN_NOT_ALLOWED'
  | 'OWNER_ONLY'
  | 'WEBSITE_LIMIT_REACHED'
  | 'COLLECTION_LIMIT_REACHED'
  | 'DRAFT_LIMIT_REACHED'
  | 'UPLOAD_URL_INVALID'
  | 'UPLOAD_URL_EXPIRED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'SLUG_TAKEN'
  | 'COLLECTION_EXISTS'
  | 'COLLECTION_CONFLICT'
  | 'FIELD_IN_USE'
  | 'PROMOTE_CONFLICT'
  | 'VERSION_CONFLICT'
  | 'ALREADY_LIVE'
  | 'NOT_PENDING'
  | 'UPLOAD_COMPLETED'
  | 'PAYLOAD_TOO_LARGE'
  | 'HEADERS_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'VALIDATION_FAILED'
  | 'PUBLISH_INVALID'
  | 'ARCHIVE_INVALID'
  | 'EDIT_NO_MATCH'
  | 'EDIT_AMBIGUOUS'
  | 'FETCH_FAILED'
  | 'IMAGE_IMPORT_FAILED'
  | 'RICH_TEXT_TOO_COSTLY'
  | 'PAGE_UNRESPONSIVE'
  | 'RATE_LIMITED'
  | 'BROWSER_UNAVAILABLE'
  | 'BROWSER_BUSY'
  | 'INTERNAL'

/** A rate limit as a caller may be told it: which policy, its quota per window, and where the caller stands. */
export interface RateLimitState {
  /** The policy's name, such as `publish`. */
  policy: string
  /** What the policy allows per window. */
  limit: number
  /** What the caller has left in the current window. */
  remaining: number
  windowSeconds: number
  /** Seconds until the window frees one again. */
  resetSeconds: number
}

export interface AppErrorOptions {
  fields?: Record<string, string>
  violations?: PublishViolation[]
  /** For RATE_LIMITED: seconds until a retry may succeed. */
  retryAfterSeconds?: number
  /** For RATE_LIMITED by a named policy: the policy and the caller's state under it. */
  rateLimit?: RateLimitState
  /** What a caller acts on beyond fields, such as the capability a token lacks (TOKEN_NOT_ALLOWED). */
  details?: Record<string, unknown>
  cause?: unknown
}

export class AppError extends Error {
  readonly code: ErrorCode
  readonly fields?: Record<string, string>
  readonly violations?: PublishViolation[]
  readonly retryAfterSeconds?: number
  readonly rateLimit?: RateLimitState
  readonly details?: Record<string, unknown>

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AppError'
    this.code = code
    this.fields = options.fields
    this.violations = options.violations
    this.retryAfterSeconds = options.retryAfterSeconds
    this.rateLimit = options.rateLimit
    this.details = options.details
  }

  /** The envelope body, identical for REST and MCP. */
  toEnvelope(): ErrorEnvelope {
    const error: ErrorEnvelope['error'] = { code: this.code, message: this.message }
    if (this.fields) error.fields = this.fields
    if (this.violations) error.violations = this.violations
    if (this.details) error.details = this.details
    return { error }
  }
}

export interface ErrorEnvelope {
  error: {
    code: string
    message: string
    fields?: Record<string, string>
    violations?: PublishViolation[]
    details?: Record<string, unknown>
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found.`)

/** A field name as the client spelled it, shortened: a long unknown key is never echoed in full. */
const FIELD_SEGMENT_MAX = 100

/**
 * How errors name a field from its place in the request: `['files', 0, 'path']` is
 * `files[0].path` (an index a number or digits); `body` for the request itself.
 */
export function fieldName(segments: readonly (string | number)[]): string {
  return (
    segments
      .map((segment) => clipped(String(segment), FIELD_SEGMENT_MAX))
      .reduce((name, seg) => (/^\d+$/.test(seg) ? `${name}[${seg}]` : name ? `${name}.${seg}` : seg), '') || 'body'
  )
}

export const validationFailed = (fields: Record<string, string>, message?: string): AppError =>
  new AppError(
    'VALIDATION_FAILED',
    message ??
      `Invalid request: ${Object.entries(fields)
        .map(([k, v]) => `${k} ${v}`)
        .join('; ')}`,
    { fields },
  )
