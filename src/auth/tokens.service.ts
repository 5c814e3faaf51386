import { createHash } from 'node:crypto'
import { parseStoredList, storedCapabilities } from '../core/capabilities.ts'
import { CAPABILITIES, type Capability, DEFAULT_TOKEN_ACCESS, type Surface, TOKEN_ACCESS, type TokenAccess } from '../core/enums.ts'
import { AppError, validationFailed } from '../core/errors.ts'
import { newId, nowIso, randomBase62 } from '../core/ids.ts'
import { DISPLAY_NAME_MAX_CHARS } from '../core/limits.ts'
import type { Principal } from '../core/principal.ts'
import type { TokenRow } from '../db/types.ts'
import type { TokensRepository } from './tokens.repository.ts'

const TOKEN_PREFIX = 'plinth'

/** 43 base62 characters carry 256 bits, the 32 random bytes the token format asks for. */
const SECRET_LENGTH = 43
const TOKEN_SHAPE = new RegExp(`^${TOKEN_PREFIX}_[A-Za-z0-9]{${SECRET_LENGTH}}$`)
/** last_used_at is written at most this often per token, so reads do not become writes. */
const TOUCH_INTERVAL_MS = 60_000

/** What a token is limited to, as asked: lists or comma-separated names; empty or absent is no limit. */
export interface ScopeInput {
  capabilities?: string | readonly string[] | null
  sites?: string | readonly string[] | null
}

/** A checked scope: null where there is no limit. */
export interface TokenScope {
  capabilities: Capability[] | null
  sites: string[] | null
}

/** A token's scope as its row stores it. */
export const scopeOfRow = (row: { capabilities: string | null; sites: string | null }): TokenScope => ({
  capabilities: parseStoredList<Capability>(row.capabilities),
  sites: parseStoredList<string>(row.sites),
})

const listOf = (value: string | readonly string[] | null | undefined): string[] => [
  ...new Set((typeof value === 'string' ? value.split(',') : (value ?? [])).map((one) => one.trim()).filter((one) => one !== '')),
]

export type AuthResult = { ok: true; principal: Principal } | { ok: false; reason: 'missing' | 'invalid' | 'expired' | 'revoked' }

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex')

/** An access token issued by the OAuth server (oauth/), resolved to the person it was issued to. */
export interface OAuthTokens {
  /** The person, when the token is live and issued for this server; null otherwise. */
  resolveAccessToken(token: string): Promise<({ userId: string; email: string; name: string | null; grantId: string } & TokenScope) | null>
}

/** oidc-provider's opaque tokens: base64url, 43 characters and more. */
const OAUTH_TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,256}$/

/** Whether a token still opens anything, as listings show it. */
export function tokenState(token: Pick<TokenRow, 'revoked_at' | 'expires_at'>, now = Date.now()): 'active' | 'revoked' | 'expired' {
  if (token.revoked_at) return 'revoked'
  return token.expires_at && Date.parse(token.expires_at) <= now ? 'expired' : 'active'
}

export const tokenReaches = (access: TokenAccess, surface: Surface): boolean => access === 'both' || access === surface

export class TokensService {
  /** `oauth`: where OAuth access tokens are resolved; without it only personal access tokens are accepted. */
  constructor(private readonly options: { repo: TokensRepository; oauth: OAuthTokens | null }) {}

  /**
   * Checks a scope asked for a token of the user (or an app they connect): every capability known,
   * every site one they own or edit. Returns the problems by field, and the scope when there are none.
   */
  async checkScope(userId: string, input: ScopeInput): Promise<{ fields: Record<string, string>; scope: TokenScope }> {
    const fields: Record<string, string> = {}
    const capabilities = listOf(input.capabilities)
    const unknown = capabilities.filter((one) => !CAPABILITIES.includes(one as Capability))
    if (unknown.length) fields.capabilities = `names unknown capabilities (${unknown.join(', ')}): choose among ${CAPABILITIES.join(', ')}`
    const sites = listOf(input.sites)
    if (sites.length) {
      const visible = new Set(await this.options.repo.visibleSiteIds(userId, sites))
      const foreign = sites.filter((id) => !visible.has(id))
      if (foreign.length) fields.sites = `names websites you neither own nor edit (${foreign.join(', ')})`
    }
    return { fields, scope: { capabilities: storedCapabilities(capabilities as Capability[]), sites: sites.length ? sites : null } }
  }

  /** Creates a token and returns its secret: the only time the secret exists outside the caller. */
  async create(userId: string, input: { name?: string; access?: string; expiresAt?: string | null } & ScopeInput): Promise<{ token: string; row: TokenRow }> {
    const access = (input.access ?? DEFAULT_TOKEN_ACCESS) as TokenAccess
    const { fields, scope } = await this.checkScope(userId, input)
    if (!TOKEN_ACCESS.includes(access)) fields.access = `must be one of ${TOKEN_ACCESS.join(', ')}`
    const name = (input.name ?? 'Personal access token').trim()
    if (name === '' || name.length > DISPLAY_NAME_MAX_CHARS) fields.name = `must be 1 to ${DISPLAY_NAME_MAX_CHARS} characters`
    let expiresAt: string | null = null
    if (input.expiresAt) {
      const at = new Date(input.expiresAt)
      if (Number.isNaN(at.getTime())) fields.expiresAt = 'must be an ISO-8601 date'
      else if (at.getTime() <= Date.now()) fields.expiresAt = 'must be in the future'
      else expiresAt = at.toISOString()
    }
    if (Object.keys(fields).length) throw validationFailed(fields)

    const token = `${TOKEN_PREFIX}_${randomBase62(SECRET_LENGTH)}`
    const row: TokenRow = {
      id: newId('tok'),
      user_id: userId,
      name,
      token_hash: hashToken(token),
      token_hint: token.slice(0, TOKEN_PREFIX.length + 5),
      access,
      created_at: nowIso(),
      last_used_at: null,
      expires_at: expiresAt,
      revoked_at: null,
      capabilities: scope.capabilities && JSON.stringify(scope.capabilities),
      sites: scope.sites && JSON.stringify(scope.sites),
    }
    await this.options.repo.insert(row)
    return { token, row }
  }

  list(userId: string): Promise<TokenRow[]> {
    return this.options.repo.listByUser(userId)
  }

  /** Revokes a token: the user's own, or any (administration) when userId is null. */
  async revoke(userId: string | null, tokenId: string): Promise<void> {
    if (!(await this.options.repo.revoke(userId, tokenId, nowIso()))) {
      throw new AppError('NOT_FOUND', `No live token with the id ${tokenId}.`)
    }
  }

  /** Resolves an `Authorization` header value to a principal; never throws for bad input. */
  async authenticate(authorization: string | undefined): Promise<AuthResult> {
    if (!authorization) return { ok: false, reason: 'missing' }
    const token = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)?.[1]
    if (token === undefined) return { ok: false, reason: 'invalid' }
    if (!TOKEN_SHAPE.test(token)) return this.authenticateOAuth(token)
    const row = await this.options.repo.findByHash(hashToken(token))
    if (!row) return { ok: false, reason: 'invalid' }
    if (row.revoked_at) return { ok: false, reason: 'revoked' }
    const now = Date.now()
    if (row.expires_at && Date.parse(row.expires_at) <= now) return { ok: false, reason: 'expired' }
    if (!row.last_used_at || now - Date.parse(row.last_used_at) > TOUCH_INTERVAL_MS) {
      await this.options.repo.touch(row.id, new Date(now).toISOString())
    }
    return {
      ok: true,
      principal: { userId: row.user_id, email: row.user_email, name: row.user_name, tokenId: row.id, access: row.access, ...scopeOfRow(row) },
    }
  }

  /** An OAuth access token (sign-in from an MCP client) reaches both surfaces, as the person, within what they let the app do. */
  private async authenticateOAuth(token: string): Promise<AuthResult> {
    if (!this.options.oauth || !OAUTH_TOKEN_SHAPE.test(token)) return { ok: false, reason: 'invalid' }
    const found = await this.options.oauth.resolveAccessToken(token)
    if (!found) return { ok: false, reason: 'invalid' }
    return {
      ok: true,
      principal: {
        userId: found.userId,
        email: found.email,
        name: found.name,
        tokenId: `oauth:${found.grantId}`,
        access: 'both',
        capabilities: found.capabilities,
        sites: found.sites,
      },
    }
  }
}
