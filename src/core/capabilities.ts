/**
 * What each operation needs of a token, and the check of it. Every REST operation of `/v1` and
 * every MCP tool has its need in the one table of core/capability-map.ts; auth/auth.routes.ts
 * checks a route's in one preHandler, and mcp/mcp.server.ts lists and calls only the tools the
 * token may. An operation missing from the table is refused at start.
 *
 * A token that names no capability has them all, and one that names no site reaches every site
 * its person sees: tokens made before scopes existed keep working as they did.
 */
import { CAPABILITIES, type Capability, TOKEN_SCOPE } from './enums.ts'
import { AppError } from './errors.ts'
import type { Principal } from './principal.ts'

/**
 * What an operation needs:
 * - one capability;
 * - `publish`: a new version, which goes live unless the input's `promote` is false: `promote`
 *   then, `preview` for a version only stored for review;
 * - `create-site`: a new website, whose first version is served at once at its live address:
 *   `promote`, and a token not limited to some sites (it could not reach the new one);
 * - `files`: uploads, which feed publishes and entries alike: any of `preview`, `promote`, `content`;
 * - `public`: no token at all (the API index, an upload's signed URL).
 */
export type CapabilityNeed = Capability | 'publish' | 'create-site' | 'files' | 'public'

export const NEEDS: readonly CapabilityNeed[] = [...CAPABILITIES, 'publish', 'create-site', 'files', 'public']

/** The capabilities of which one is enough for a need, whatever the input; empty for `public`. */
export function capabilitiesFor(need: CapabilityNeed, input?: unknown): readonly Capability[] {
  switch (need) {
    case 'publish':
      if (input === undefined) return ['preview', 'promote']
      return (input as { promote?: unknown } | null | undefined)?.promote === false ? ['preview'] : ['promote']
    case 'create-site':
      return ['promote']
    case 'files':
      return ['preview', 'promote', 'content']
    case 'public':
      return []
    default:
      return [need]
  }
}

const has = (principal: Pick<Principal, 'capabilities'>, capability: Capability): boolean =>
  principal.capabilities === null || principal.capabilities.includes(capability)

/** Whether a principal may read what its sites hold: a refusal may quote their files only to one that may. */
export const mayRead = (principal: Pick<Principal, 'capabilities'>): boolean => has(principal, 'read')

/** Whether a principal may call an operation with this need for some input (what MCP's tools/list shows). */
export function mayEverCall(principal: Pick<Principal, 'capabilities' | 'sites'>, need: CapabilityNeed): boolean {
  if (need === 'create-site' && principal.sites !== null) return false
  const any = capabilitiesFor(need)
  return any.length === 0 || any.some((capability) => has(principal, capability))
}

/** A refusal of a call beyond the token's capabilities, naming what it lacks. */
export function capabilityRefusal(principal: Pick<Principal, 'capabilities'>, needed: readonly Capability[]): AppError {
  const named = needed.join(' or ')
  const granted = principal.capabilities ?? CAPABILITIES
  return new AppError(
    'TOKEN_NOT_ALLOWED',
    `This token lacks the ${named} capability this operation needs; it has ${granted.length ? granted.join(', ') : 'none'}. Mint a token with ${named}.`,
    { fields: { capability: `needs ${named}` }, details: { missingCapability: named, tokenCapabilities: [...granted] } },
  )
}

/** Throws TOKEN_NOT_ALLOWED when the principal may not make this call with this input. */
export function requireCapability(principal: Pick<Principal, 'capabilities' | 'sites'>, need: CapabilityNeed, input: unknown): void {
  const any = capabilitiesFor(need, input)
  if (any.length > 0 && !any.some((capability) => has(principal, capability))) throw capabilityRefusal(principal, any)
  if (need === 'create-site' && principal.sites !== null) {
    throw new AppError('TOKEN_NOT_ALLOWED', 'This token is limited to some websites, so it cannot create one; use a token not limited to sites.', {
      details: { missingCapability: 'all sites' },
    })
  }
}

/** The OAuth scope of a capability (oauth/), `plinth:read` for `read`. */
export const capabilityScope = (capability: Capability): string => `plinth:${capability}`

export const CAPABILITY_SCOPES: readonly string[] = CAPABILITIES.map(capabilityScope)

/** Every scope the resources accept: `mcp` (all capabilities) and one per capability. */
export const SCOPES_SUPPORTED: readonly string[] = [TOKEN_SCOPE, ...CAPABILITY_SCOPES]

/** The capabilities a space-separated scope asks for: all of them for none, or for `mcp`. */
export function capabilitiesOfScope(scope: string | undefined): Capability[] {
  const asked = new Set((scope ?? '').split(' ').filter(Boolean))
  const named = CAPABILITIES.filter((capability) => asked.has(capabilityScope(capability)))
  return asked.has(TOKEN_SCOPE) || named.length === 0 ? [...CAPABILITIES] : named
}

/** A list of capabilities as stored: null for all of them (or none given). */
export const storedCapabilities = (capabilities: readonly Capability[]): Capability[] | null =>
  capabilities.length === 0 || CAPABILITIES.every((c) => capabilities.includes(c)) ? null : CAPABILITIES.filter((c) => capabilities.includes(c))

/** Reads what a row stores: a JSON array, or null for no limit. */
export function parseStoredList<T extends string>(value: string | null): T[] | null {
  if (value === null) return null
  const parsed = JSON.parse(value) as unknown
  return Array.isArray(parsed) ? (parsed.filter((one) => typeof one === 'string') as T[]) : null
}
