/**
 * Site passwords on the serving side. A protected site answers every path of every host it has
 * (live, previews) with a password page (401, no byte of the site, no entry, no feed) until the
 * visitor posts the right password to `/.plinth/unlock` on that host; then it sets a cookie
 * scoped to that host alone (no Domain attribute), `HttpOnly`, `SameSite=Lax`, `Secure` on https,
 * signed with a key every instance shares and bound to the moment the password was set, so a new
 * password (or its removal) ends every cookie handed out before. Checking the password and
 * counting wrong guesses (per site and client address) is the websites feature's: the SiteUnlocker
 * port.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { parse as parseCookies } from 'cookie'
import { escapeHtml } from '../core/html.ts'
import { SITE_PASSWORD_MAX } from '../core/limits.ts'
import { safeReturnPath } from '../core/site-address.ts'
import { type BuiltinPage, builtin, sendPage } from './security-headers.ts'
import type { PreparedVersion } from './site-version.ts'

/** The path the password form posts to, on the site's own host. */
export const UNLOCK_PATH = '/.plinth/unlock'

export type UnlockResult = { ok: true } | { ok: false; retryAfterSeconds: number | null }

export interface SiteUnlocker {
  /** Whether `password` opens the site, counting wrong guesses per site and client address. */
  unlock(websiteId: string, password: string, address: string): Promise<UnlockResult>
}

export interface SiteLockOptions {
  /** HMAC key of the unlock cookies (shared by every instance). */
  key: Buffer
  unlocker: SiteUnlocker
  /** Sites are served over https: the cookie is `Secure` and `__Host-` prefixed. */
  secure: boolean
  /** The client's address (what wrong guesses are counted by): the connection's, or what trusted proxies report. */
  clientAddress?: (req: IncomingMessage) => string
}

/** Bytes of a password form post read at most: a password is at most 200 characters. */
const MAX_FORM_BYTES = 4096
/** How long an unlock lasts. */
const UNLOCK_MAX_AGE_SECONDS = 7 * 24 * 3600
const CROSS_SITE_FORM = builtin(403, 'text/plain; charset=utf-8', 'Forbidden: the password form is posted from the site itself.\n')
// The rest of the body is not read: the connection closes once this is sent.
const FORM_TOO_LARGE = builtin(413, 'text/plain; charset=utf-8', 'The form is too large.\n', ['Connection', 'close'])

export class SiteLock {
  private readonly cookieName: string

  constructor(private readonly options: SiteLockOptions) {
    this.cookieName = options.secure ? '__Host-plinth_unlock' : 'plinth_unlock'
  }

  /** Whether the request carries a valid unlock cookie for this (protected) version's site. */
  isUnlocked(req: IncomingMessage, version: PreparedVersion): boolean {
    const header = req.headers.cookie
    if (header === undefined || !header.includes(this.cookieName)) return false
    const value = parseCookies(header)[this.cookieName]
    if (value === undefined) return false
    const dot = value.indexOf('.')
    const expires = Number(value.slice(0, dot))
    if (dot <= 0 || !Number.isSafeInteger(expires) || expires * 1000 < Date.now()) return false
    const given = Buffer.from(value.slice(dot + 1), 'base64url')
    const expected = this.signature(version, expires)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  /** The password page for a request to a protected site, leading back to what it asked for. */
  lockedPage(req: IncomingMessage): BuiltinPage {
    return passwordPage(401, req.url ?? '/', null)
  }

  /** Answers a POST to UNLOCK_PATH: the cookie and a redirect back, or the page again with why not. */
  async unlock(req: IncomingMessage, res: ServerResponse, version: PreparedVersion): Promise<void> {
    const host = req.headers.host ?? ''
    const origin = req.headers.origin
    // A cross-site form must not sign a visitor in (login CSRF); browsers send Origin on POST.
    if (origin !== undefined && origin !== 'null' && hostOf(origin) !== host.toLowerCase()) {
      sendPage(res, CROSS_SITE_FORM, false)
      return
    }
    const form = await readForm(req)
    if (form === null) {
      sendPage(res, FORM_TOO_LARGE, false)
      return
    }
    const next = safeNext(form.get('next'))
    if (version.lockedSince === null) {
      seeOther(res, next)
      return
    }
    const password = form.get('password') ?? ''
    const address = this.options.clientAddress?.(req) ?? req.socket.remoteAddress ?? 'unknown'
    const result = await this.options.unlocker.unlock(version.websiteId, password, address)
    if (!result.ok) {
      const wait = result.retryAfterSeconds
      const page =
        wait === null
          ? passwordPage(401, next, 'That password is not right. Try again.')
          : passwordPage(429, next, `Too many wrong passwords. Try again in ${minutes(wait)}.`, ['Retry-After', String(wait)])
      sendPage(res, page, false)
      return
    }
    const expires = Math.floor(Date.now() / 1000) + UNLOCK_MAX_AGE_SECONDS
    const cookie =
      `${this.cookieName}=${expires}.${this.signature(version, expires).toString('base64url')}; Path=/; Max-Age=${UNLOCK_MAX_AGE_SECONDS}; HttpOnly; SameSite=Lax` +
      (this.options.secure ? '; Secure' : '')
    seeOther(res, next, { 'Set-Cookie': cookie })
  }

  private signature(version: PreparedVersion, expires: number): Buffer {
    return createHmac('sha256', this.options.key).update(`${version.websiteId}|${version.lockedSince}|${expires}`).digest()
  }
}

/** Sends the visitor on to `location`, never kept by a cache. */
function seeOther(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { Location: location, ...headers, 'Content-Length': '0', 'Cache-Control': 'no-store' })
  res.end()
}

const minutes = (seconds: number) => {
  const m = Math.max(1, Math.ceil(seconds / 60))
  return `${m} minute${m === 1 ? '' : 's'}`
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host.toLowerCase()
  } catch {
    return null
  }
}

/** Where to go after unlocking: a path of this site only (never `//elsewhere`). */
const safeNext = (next: string | null): string => safeReturnPath(next) ?? '/'

/** The urlencoded form of the request, null when it is larger than a password form can be. */
function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      if (size > MAX_FORM_BYTES) return
      size += chunk.length
      // Answered (FORM_TOO_LARGE) rather than cut off, so the visitor is told why.
      if (size > MAX_FORM_BYTES) resolve(null)
      else chunks.push(chunk)
    })
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))))
    req.on('error', reject)
  })
}

/** A plain, accessible page with one password field; `next` is where the visitor was going. */
function passwordPage(status: 401 | 429, next: string, message: string | null, extra: readonly string[] = []): BuiltinPage {
  const alert = message === null ? '' : `<p class="error" role="alert">${escapeHtml(message)}</p>`
  const nextField = `<input type="hidden" name="next" value="${escapeHtml(safeNext(next))}">`
  const html =
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">' +
    '<title>Password required</title>' +
    '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:15vh auto;padding:0 1rem;color:#222}' +
    'h1{font-size:1.5rem}label{display:block;font-weight:600;margin:1rem 0 .25rem}' +
    'input[type=password]{width:100%;box-sizing:border-box;font:inherit;padding:.5rem;border:1px solid #767676;border-radius:4px}' +
    'button{margin-top:1rem;font:inherit;padding:.5rem 1.25rem;border:0;border-radius:4px;background:#1d4ed8;color:#fff;cursor:pointer}' +
    'button:focus-visible,input:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}.error{color:#b91c1c}</style></head>' +
    '<body><main><h1>This site is protected</h1><p>Enter the password to see it.</p>' +
    alert +
    `<form method="post" action="${UNLOCK_PATH}">${nextField}` +
    '<label for="password">Password</label>' +
    `<input id="password" name="password" type="password" autocomplete="current-password" required autofocus maxlength="${SITE_PASSWORD_MAX}">` +
    '<button type="submit">Unlock</button></form></main></body></html>\n'
  return builtin(status, 'text/html; charset=utf-8', html, extra)
}
