/**
 * The REST API of a Plinth instance as the `plinth` client commands call it: JSON in and out, the
 * bearer token on every call but the API index, and every non-2xx answer turned into an ApiError
 * that carries the error envelope (code, message, fields, violations).
 */
import type { PublishViolation } from '../core/errors.ts'

/** A refusal by the server, as its error envelope states it, or a failure to reach it (code NETWORK). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly violations: PublishViolation[] = [],
    readonly fields: Record<string, string> = {},
  ) {
    super(message)
  }
}

export interface ApiClientOptions {
  /** The instance's base URL (`https://plinth.example.com`), without `/v1`. */
  baseUrl: string
  token: string
  /** Sent as User-Agent, so the server's logs tell the command apart. */
  userAgent: string
}

export class ApiClient {
  readonly baseUrl: string

  constructor(private readonly options: ApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
  }

  async call<T>(method: string, apiPath: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.options.userAgent }
    if (apiPath !== '/v1') headers.authorization = `Bearer ${this.options.token}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    const response = await this.send(`${this.baseUrl}${apiPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await response.text()
    const parsed = parseJson(text)
    if (!response.ok) throw refusal(response.status, parsed, text)
    if (response.status === 204) return undefined as T
    if (parsed === undefined)
      throw new ApiError(response.status, 'BAD_RESPONSE', `${method} ${apiPath} answered ${response.status} with no JSON: is ${this.baseUrl} a Plinth server?`)
    return parsed as T
  }

  /** PUTs bytes to a signed upload URL (no bearer token: the URL's signature is the credential). */
  async putBytes(url: string, bytes: Buffer, headers: Record<string, string>): Promise<void> {
    const response = await this.send(url, {
      method: 'PUT',
      headers: { ...headers, 'user-agent': this.options.userAgent },
      body: new Blob([new Uint8Array(bytes)]),
    })
    const text = await response.text()
    if (!response.ok) throw refusal(response.status, parseJson(text), text)
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init)
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      throw new ApiError(0, 'NETWORK', `Cannot reach ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message}`)
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function refusal(status: number, body: unknown, text: string): ApiError {
  const error = (body as { error?: { code?: unknown; message?: unknown; violations?: unknown; fields?: unknown } } | undefined)?.error
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    return new ApiError(
      status,
      error.code,
      error.message,
      Array.isArray(error.violations) ? (error.violations as PublishViolation[]) : [],
      typeof error.fields === 'object' && error.fields !== null ? (error.fields as Record<string, string>) : {},
    )
  }
  return new ApiError(status, `HTTP_${status}`, `The server answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`)
}
