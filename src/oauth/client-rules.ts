/**
 * What a client's metadata may be, checked wherever oidc-provider reads a client: at dynamic
 * registration, from a client ID metadata document, and when a stored client is loaded (one
 * stored before a rule changed is refused then). The library validates every client through one
 * schema whose redirect URI check runs last, after the types of every value were checked; the
 * rules below wrap that check.
 *
 * - Sizes: client_name up to OAUTH_CLIENT_NAME_MAX_CHARS, every other text value (each URI among
 *   them) up to OAUTH_CLIENT_URI_MAX_CHARS, every list (redirect_uris, contacts, ...) up to
 *   OAUTH_CLIENT_LIST_MAX members.
 * - Redirect URIs: `https`, `http` on loopback only (127.0.0.1, [::1], localhost, any port), or
 *   a private-use scheme of an app (`com.example.app:/callback`, `cursor://...`); schemes that
 *   browsers or the system handle themselves (javascript:, data:, file:, ws:, mailto:, ...) are
 *   refused.
 * - Application type: MCP clients register loopback and app redirect URIs without saying they
 *   are native apps. RFC 8252 treats such clients as native: their loopback redirects may then
 *   use any port, as the library allows native clients. Registrations that name a type keep it.
 * - Scopes: `mcp` stands for every capability (core/capabilities.ts), so a client registered with
 *   it may ask for each capability's scope (`plinth:read`, ...) too.
 */
import type { default as Provider } from 'oidc-provider'
import { CAPABILITY_SCOPES } from '../core/capabilities.ts'
import { TOKEN_SCOPE } from '../core/enums.ts'
import { OAUTH_CLIENT_LIST_MAX, OAUTH_CLIENT_NAME_MAX_CHARS, OAUTH_CLIENT_URI_MAX_CHARS } from '../core/limits.ts'

type ClientSchema = Record<string, unknown> & { invalidate(message: string): never }

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])
/** RFC 3986 scheme syntax, lowercased by URL parsing. */
const SCHEME = /^[a-z][a-z0-9+.-]*:$/
/** Schemes that are not an app's own: the browser or the system answers them. */
const NOT_PRIVATE_USE = new Set(
  ['about', 'blob', 'chrome', 'data', 'file', 'filesystem', 'ftp', 'intent', 'javascript', 'mailto', 'sms', 'tel', 'vbscript', 'view-source', 'ws', 'wss'].map(
    (scheme) => `${scheme}:`,
  ),
)

export function installClientRules(provider: Provider): void {
  const schema = (provider.Client as unknown as { Schema: { prototype: Record<string, unknown> } }).Schema.prototype
  const original = schema.redirectUris as (this: ClientSchema, ...args: unknown[]) => unknown
  schema.redirectUris = function (this: ClientSchema, ...args: unknown[]) {
    // Called without arguments for redirect_uris, once every value's type is checked.
    if (args.length === 0) {
      checkSizes(this)
      const uris = (this.redirect_uris as string[] | undefined) ?? []
      for (const uri of uris) {
        const problem = redirectUriProblem(uri)
        if (problem) this.invalidate(`redirect_uris ${problem}: ${uri}`)
      }
      if (this.application_type === 'web' && uris.length > 0 && uris.every(isNativeRedirect)) this.application_type = 'native'
      if (typeof this.scope === 'string' && this.scope.split(' ').includes(TOKEN_SCOPE)) {
        this.scope = [...new Set([...this.scope.split(' '), ...CAPABILITY_SCOPES])].join(' ')
      }
    }
    return original.apply(this, args)
  }
}

function checkSizes(client: ClientSchema): void {
  for (const [name, value] of Object.entries(client)) {
    if (Array.isArray(value)) {
      if (value.length > OAUTH_CLIENT_LIST_MAX) client.invalidate(`${name} must have at most ${OAUTH_CLIENT_LIST_MAX} members`)
      for (const member of value) {
        if (typeof member === 'string' && member.length > OAUTH_CLIENT_URI_MAX_CHARS) {
          client.invalidate(`${name} members must be at most ${OAUTH_CLIENT_URI_MAX_CHARS} characters`)
        }
      }
    } else if (typeof value === 'string') {
      const max = name === 'client_name' ? OAUTH_CLIENT_NAME_MAX_CHARS : OAUTH_CLIENT_URI_MAX_CHARS
      if (value.length > max) client.invalidate(`${name} must be at most ${max} characters`)
    }
  }
}

/** Why a redirect URI is refused, or undefined when it is allowed. */
export function redirectUriProblem(uri: string): string | undefined {
  const url = URL.parse(uri)
  if (!url) return 'must be absolute URIs'
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:') return LOOPBACK.has(url.hostname) ? undefined : 'may use http only on loopback (127.0.0.1, [::1], localhost)'
  if (!SCHEME.test(url.protocol) || NOT_PRIVATE_USE.has(url.protocol)) return 'must be https, http on loopback, or an app scheme (com.example.app:/callback)'
  return undefined
}

function isNativeRedirect(uri: string): boolean {
  const url = URL.parse(uri)
  if (!url) return false
  if (url.protocol === 'http:') return LOOPBACK.has(url.hostname)
  return url.protocol !== 'https:'
}

/** The host a redirect URI sends the browser to, as the consent page and the dashboard name it. */
export function redirectHost(uri: string): string {
  try {
    const url = new URL(uri)
    return url.host || `${url.protocol}//`
  } catch {
    return uri
  }
}
