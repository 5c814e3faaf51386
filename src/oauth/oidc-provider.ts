/**
 * oidc-provider, loaded once on first use (oauth.service.ts), and what Plinth adjusts in it.
 *
 * Its 9.x line prints "Unsupported runtime. Use Node.js v22.x LTS" when imported on an earlier
 * Node release; Plinth supports Node 20.19 and later and runs its whole OAuth test suite there, so
 * that one line is kept off stderr (where it would read as a fault at every start). Every other
 * message of the library still shows.
 */
import type * as OidcProvider from 'oidc-provider'
import type { default as Provider } from 'oidc-provider'

const RUNTIME_ADVISORY = 'oidc-provider WARNING: Unsupported runtime'

let loaded: Promise<typeof OidcProvider> | undefined

export function loadOidcProvider(): Promise<typeof OidcProvider> {
  loaded ??= (async () => {
    const warn = console.warn
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].startsWith(RUNTIME_ADVISORY)) return
      warn(...args)
    }
    try {
      return await import('oidc-provider')
    } finally {
      console.warn = warn
    }
  })()
  return loaded
}

/**
 * MCP clients register loopback (`http://127.0.0.1:{port}`) and app (`cursor://`, `vscode://`)
 * redirect URIs without saying they are native apps. RFC 8252 treats such clients as native:
 * their loopback redirects may then use any port, as the library allows native clients.
 * Registrations that name an application type keep it.
 */
export function inferApplicationType(provider: Provider): void {
  const schema = (provider.Client as unknown as { Schema: { prototype: Record<string, unknown> } }).Schema.prototype
  const original = schema.redirectUris as (this: Record<string, unknown>, ...args: unknown[]) => unknown
  schema.redirectUris = function (this: Record<string, unknown>, ...args: unknown[]) {
    const uris = (this.redirect_uris as string[] | undefined) ?? []
    if (args.length === 0 && this.application_type === 'web' && uris.length > 0 && uris.every(isNativeRedirect)) this.application_type = 'native'
    return original.apply(this, args)
  }
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

function isNativeRedirect(uri: string): boolean {
  try {
    const url = new URL(uri)
    if (url.protocol === 'http:') return LOOPBACK.has(url.hostname)
    return url.protocol !== 'https:'
  } catch {
    return false
  }
}
