/**
 * The scopes the authorization server takes: OpenID's sign-in (`openid`) and refresh
 * (`offline_access`), `mcp` (every capability) and one per capability (`plinth:read`, ...).
 */
import { CAPABILITY_SCOPES } from '../core/capabilities.ts'
import { TOKEN_SCOPE } from '../core/enums.ts'

/** OpenID's sign-in and refresh scopes, and `mcp`. */
const OIDC_SCOPES: readonly string[] = ['openid', 'offline_access', TOKEN_SCOPE]

/**
 * Scopes a client may register and ask for: the above and each capability's. A client
 * registered with `mcp` may ask for each capability's too (client-rules.ts).
 */
export const SUPPORTED_SCOPES: readonly string[] = [...OIDC_SCOPES, ...CAPABILITY_SCOPES]

/**
 * The scope an authorization request goes on with, from the one it asked (RFC 6749 §3.3 lets a
 * server ignore what it does not grant; the token response then names the scope granted):
 * - a scope Plinth does not know (`profile`, `email`, a typo) is left out, so an app that asks
 *   for its usual OpenID scopes still connects;
 * - with no resource scope left (none asked, or only unknown or OpenID ones), `mcp` is asked;
 * - `mcp` asks for every capability's scope, of which the person may allow fewer.
 */
export function authorizationScope(asked: string | null): string {
  const known = [...new Set((asked ?? '').split(' ').filter((scope) => SUPPORTED_SCOPES.includes(scope)))]
  const resourceScopes = known.filter((scope) => scope === TOKEN_SCOPE || CAPABILITY_SCOPES.includes(scope))
  if (resourceScopes.length === 0) known.push(TOKEN_SCOPE)
  return (known.includes(TOKEN_SCOPE) ? [...new Set([...known, ...CAPABILITY_SCOPES])] : known).join(' ')
}
