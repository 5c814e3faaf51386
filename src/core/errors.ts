/**
 * One error model for every surface. Services throw AppError with a stable code; the HTTP error
 * handler renders it as the envelope {error:{code,message,fields?,violations?}} and MCP tools turn
 * it into an isError result with the same content.
 */

export interface PublishViolation {
  code: string
  message: string
  path?: string
  detail?: string
}

/** Every error code Plinth returns, with its HTTP status. */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  INVALID_JSON: 400,
  AUTH_REQUIRED: 401,
  SIGN_IN_FAILED: 401,
  TOKEN_NOT_ALLOWED: 403,
  SIGNUP_CLOSED: 403,
  ORIGIN_NOT_ALLOWED: 403,
  OWNER_ONLY: 403,
  WEBSITE_LIMIT_REACHED: 403,
  COLLECTION_LIMIT_REACHED: 403,
  UPLOAD_URL_INVALID: 403,
  UPLOAD_URL_EXPIRED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SLUG_TAKEN: 409,
  COLLECTION_EXISTS: 409,
  COLLECTION_CONFLICT: 409,
  FIELD_IN_USE: 409,
  PROMOTE_CONFLICT: 409,
  UPLOAD_COMPLETED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  PUBLISH_INVALID: 422,
  FETCH_FAILED: 422,
  IMAGE_IMPORT_FAILED: 422,
  RICH_TEXT_TOO_COSTLY: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export interface AppErrorOptions {
  fields?: Record<string, string>
  violations?: PublishViolation[]
  /** Extra response headers (Retry-After, WWW-Authenticate, Allow...). */
  headers?: Record<string, string>
  cause?: unknown
}

export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly fields?: Record<string, string>
  readonly violations?: PublishViolation[]
  readonly headers?: Record<string, string>

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AppError'
    this.code = code
    this.status = ERROR_STATUS[code]
    this.fields = options.fields
    this.violations = options.violations
    this.headers = options.headers
  }

  /** The envelope body, identical for REST and MCP. */
  toEnvelope(): ErrorEnvelope {
    const error: ErrorEnvelope['error'] = { code: this.code, message: this.message }
    if (this.fields) error.fields = this.fields
    if (this.violations) error.violations = this.violations
    return { error }
  }
}

export interface ErrorEnvelope {
  error: {
    code: string
    message: string
    fields?: Record<string, string>
    violations?: PublishViolation[]
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found.`)

export const validationFailed = (fields: Record<string, string>, message?: string): AppError =>
  new AppError(
    'VALIDATION_FAILED',
    message ??
      `Invalid request: ${Object.entries(fields)
        .map(([k, v]) => `${k} ${v}`)
        .join('; ')}`,
    { fields },
  )
