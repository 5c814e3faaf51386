/**
 * A person on the web site without a browser: real HTTP to a test server, a cookie jar, and
 * forms sent as a browser sends them (urlencoded, with the CSRF token of the page they are on).
 */
import assert from 'node:assert/strict'
import type { TestServer } from './server.ts'

export interface WebResponse {
  status: number
  headers: Headers
  text: string
  /** Set-Cookie lines, as sent. */
  setCookies: string[]
}

export class WebVisitor {
  readonly cookies = new Map<string, string>()
  /** The CSRF token of the last page fetched that had a form. */
  csrf: string | null = null

  constructor(private readonly server: TestServer) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<WebResponse> {
    const response = await this.send('GET', path, undefined, { accept: 'text/html', ...headers })
    const token = /name="_csrf" value="([^"]+)"/.exec(response.text)?.[1]
    if (token) this.csrf = token
    return response
  }

  /** POSTs a form with the current CSRF token (unless `_csrf` is given, or null to send none); a list is a field sent once per value (ticked boxes). */
  async post(path: string, fields: Record<string, string | string[] | null>, headers: Record<string, string> = {}): Promise<WebResponse> {
    const form = new URLSearchParams()
    const withToken = '_csrf' in fields ? fields : { _csrf: this.csrf, ...fields }
    for (const [name, value] of Object.entries(withToken)) {
      if (Array.isArray(value)) for (const one of value) form.append(name, one)
      else if (value !== null) form.set(name, value)
    }
    return this.send('POST', path, form.toString(), { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', ...headers })
  }

  /** Opens a page, then sends its form. */
  async submit(pagePath: string, action: string, fields: Record<string, string | string[] | null>): Promise<WebResponse> {
    await this.get(pagePath)
    return this.post(action, fields)
  }

  async signUp(email: string, password = 'correct horse battery'): Promise<WebResponse> {
    return this.submit('/sign-up', '/sign-up', { email, password })
  }

  async signIn(email: string, password = 'correct horse battery'): Promise<WebResponse> {
    return this.submit('/sign-in', '/sign-in', { email, password })
  }

  /** Creates a token on the token page and returns it as the page shows it. */
  async mintToken(name: string, access = 'both', expires = '0'): Promise<string> {
    const page = await this.submit('/mcp', '/mcp/tokens', { name, access, expires })
    const token = /<pre id="token-value"><code>(plinth_[A-Za-z0-9]+)<\/code><\/pre>/.exec(page.text)?.[1]
    if (page.status !== 201 || !token) throw new Error(`no token on the page (status ${page.status})`)
    return token
  }

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  private async send(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<WebResponse> {
    const cookie = this.cookieHeader()
    const response = await fetch(this.server.url + path, {
      method,
      body,
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...headers },
    })
    const setCookies = response.headers.getSetCookie()
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';')
      const name = pair.slice(0, pair.indexOf('='))
      const value = pair.slice(pair.indexOf('=') + 1)
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a))
      if (expired || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return { status: response.status, headers: response.headers, text: await response.text(), setCookies }
  }
}

/** An email address no other test uses: `{label}-{random}@example.com`. */
export const uniqueEmail = (label: string): string => `${label}-${Math.random().toString(36).slice(2, 8)}@example.com`

/** The text of the page's alert (form error), or null. */
export const alertText = (html: string): string | null => {
  // The first alert shown: a page may hold hidden ones a script fills in (the deploy area's).
  for (const [, attributes, text] of html.matchAll(/<div class="alert" role="alert"([^>]*)>\s*<p>([^<]*)<\/p>/g)) {
    if (!/\shidden(\s|=|$)/.test(attributes!)) return text!
  }
  return null
}

/** The first group of `pattern` in `text`; the test fails when the text does not have it. */
export function captured(pattern: RegExp, text: string): string {
  const group = pattern.exec(text)?.[1]
  assert.ok(group !== undefined, `the text has ${pattern}`)
  return group
}
