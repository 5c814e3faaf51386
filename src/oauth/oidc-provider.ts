/**
 * oidc-provider, loaded once on first use (oauth.service.ts), and what Plinth adjusts in it.
 *
 * Its 9.x line prints "Unsupported runtime. Use Node.js v22.x LTS" when imported on an earlier
 * Node release; Plinth supports Node 20.19 and later and runs its whole OAuth test suite there, so
 * that one line is kept off stderr (where it would read as a fault at every start). Every other
 * message of the library still shows.
 */
import type * as OidcProvider from 'oidc-provider'

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
