/**
 * Plinth as an OAuth 2.1 authorization server for MCP clients, built on oidc-provider (OpenID
 * certified; PKCE, dynamic client registration, client ID metadata documents, resource
 * indicators, refresh token rotation and revocation are the library's). Plinth adds:
 * - storage on its own database (oauth.adapter.ts), keys shared by every instance;
 * - two resources, the REST API (`{base_url}`, as its protected-resource metadata names it) and
 *   the MCP endpoint (`{base_url}/mcp`): one is required on every authorization and bound into
 *   the token as its audience, and a token of either audience reaches both, as the interface says;
 * - the device authorization grant (device-flow.ts) for machines without a browser;
 * - the person's sign-in and consent on the web site (`/connect/{uid}`), remembered per client;
 * - client registrations counted per client address;
 * - the connected apps a person sees on the dashboard and can disconnect.
 * Public clients only: PKCE S256 is required, no client secrets are issued.
 *
 * oidc-provider and its keys are loaded on the first request that needs them (an endpoint of the
 * authorization server, the consent page, an OAuth access token presented), not at start: they
 * are a large part of a start's time and memory, and most instances see OAuth rarely or never.
 *
 * The requests and responses themselves are oauth.routes.ts's: it hands the library its requests
 * and takes an interaction's details and results through it; this service decides.
 */
import type { Configuration, InteractionResults, JWK, KoaContextWithOIDC, default as Provider } from 'oidc-provider'
import type { Kysely } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Config } from '../config.ts'
import { clientNetwork } from '../core/client-network.ts'
import { capabilitiesOfScope, CAPABILITY_SCOPES, capabilityScope, SCOPES_SUPPORTED, storedCapabilities } from '../core/capabilities.ts'
import { CAPABILITIES, TOKEN_SCOPE } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'
import { nowIso, randomBase62 } from '../core/ids.ts'
import type { ServerSecrets } from '../db/server-secrets.ts'
import type { Database, OAuthConnectionRow } from '../db/types.ts'
import type { Logger } from '../log.ts'
import { safeFetch } from '../net/safe-fetch.ts'
import type { GuessThrottle } from '../auth/guess-throttle.ts'
import { type OAuthTokens, scopeOfRow, type TokenScope } from '../auth/tokens.service.ts'
import { OAUTH_CLIENT_SWEEP_INTERVAL_MS, OAUTH_REGISTRATIONS_PER_ADDRESS } from '../core/limits.ts'
import type { UsersService } from '../users/users.service.ts'
import { installClientRules, redirectHost } from './client-rules.ts'
import { DEVICE_CODE_TTL_SECONDS, deviceFlowFeature } from './device-flow.ts'
import { oauthAdapter, sweepExpired } from './oauth.adapter.ts'
import { errorPage, installPageGuards, type OAuthPages } from './oauth.guards.ts'
import { loadOidcProvider } from './oidc-provider.ts'
import { newSigningJwk } from './signing-key.ts'
import type { OAuthRepository } from './oauth.repository.ts'
import type { ConsentChoice, ConsentRequest, ConsentStep, Interaction } from './oauth-consent.ts'
import { OAUTH_ROUTES } from './oauth-paths.ts'
import { SUPPORTED_SCOPES } from './oauth-scopes.ts'

/** Access tokens live an hour; refresh tokens a month, renewed (rotated) at each use. */
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60
/** A connection lasts a year at most; refresh tokens are not rotated past it, so the app asks again. */
const GRANT_TTL_SECONDS = 365 * 24 * 60 * 60
const AUTHORIZATION_CODE_TTL_SECONDS = 60
const INTERACTION_TTL_SECONDS = 30 * 60
/** The scope of the resource every token carries: on its own it stands for every capability. */
const SCOPE = TOKEN_SCOPE
/** last_used_at of a connection is written at most this often. */
const TOUCH_INTERVAL_MS = 60_000

export interface OAuthServiceOptions {
  config: Pick<Config, 'baseUrl' | 'siteUrl' | 'fetchAllowHosts' | 'siteScheme'>
  db: Kysely<Database>
  repo: OAuthRepository
  users: UsersService
  secrets: ServerSecrets
  log: Logger
  /** Counts client registrations per client address (auth/guess-throttle.ts). */
  throttle: GuessThrottle
  /** The pages the library renders itself, as the web site draws them. */
  pages: OAuthPages
  /** Extra trusted certificate authorities for fetching client metadata documents (tests, intranets). */
  fetchCa?: string
}

/** The authorization server, once loaded: oidc-provider's module, the provider and its request handler. */
export interface AuthorizationServer {
  library: Awaited<ReturnType<typeof loadOidcProvider>>
  provider: Provider
  handler: ReturnType<Provider['callback']>
}

export class OAuthService implements OAuthTokens {
  /** The MCP endpoint's resource, `{base_url}/mcp`. */
  readonly resource: string
  /** Every resource a token may be issued for: the REST API's (`{base_url}`) and the MCP endpoint's. */
  readonly resources: readonly string[]
  private readonly options: OAuthServiceOptions
  /** When each grant's connection was last marked used, so a busy token writes once a minute. */
  private readonly touched = new LRUCache<string, number>({ max: 10_000 })
  private loading: Promise<AuthorizationServer> | null = null
  private sweeps?: NodeJS.Timeout

  constructor(options: OAuthServiceOptions) {
    this.options = options
    this.resource = `${options.config.baseUrl}/mcp`
    this.resources = [options.config.baseUrl, this.resource]
  }

  /** The authorization server, loaded on first use (its keys made then on a new install); a failed load is tried again next time. */
  authorizationServer(): Promise<AuthorizationServer> {
    this.loading ??= this.load().catch((error: unknown) => {
      this.loading = null
      throw error
    })
    return this.loading
  }

  private async load(): Promise<AuthorizationServer> {
    const { secrets, config, log } = this.options
    const [cookieKey, jwk, library] = await Promise.all([
      secrets.key('oauth_cookie_key'),
      secrets.value('oauth_signing_jwk', () => JSON.stringify(newSigningJwk())),
      loadOidcProvider(),
    ])
    const provider = new library.default(config.baseUrl, this.configuration(library, cookieKey.toString('base64url'), JSON.parse(jwk) as JWK))
    // The forwarding headers it reads are the ones Plinth sets (oauth.routes.ts).
    provider.proxy = true
    installPageGuards(provider)
    installClientRules(provider)
    provider.on('server_error', (_ctx, error) => log.error({ err: error }, 'OAuth server error'))
    return { library, provider, handler: provider.callback() }
  }

  /** Removes what has expired: registrations nobody connected, codes, tokens, interactions. */
  sweep(): Promise<number> {
    return sweepExpired(this.options.db)
  }

  /** Sweeps now, then every OAUTH_CLIENT_SWEEP_INTERVAL_MS until close(). */
  async startSweeps(): Promise<void> {
    await this.sweep()
    this.sweeps = setInterval(() => {
      this.sweep().catch((error: unknown) => this.options.log.error({ err: error }, 'sweeping expired OAuth registrations and tokens failed'))
    }, OAUTH_CLIENT_SWEEP_INTERVAL_MS).unref()
  }

  /** Stops the periodic sweep. */
  close(): void {
    clearInterval(this.sweeps)
  }

  /**
   * Counts a client registration from a client address: the seconds it must wait when the address
   * made too many within the throttle window (then nothing is counted), else 0.
   */
  async registrationWait(address: string): Promise<number> {
    const subject = `oauth-registration:${clientNetwork(address)}`
    const waitSeconds = await this.options.throttle.waitSeconds([[subject, OAUTH_REGISTRATIONS_PER_ADDRESS]])
    if (waitSeconds === 0) await this.options.throttle.recordFailure([subject])
    return waitSeconds
  }

  /**
   * The person behind an OAuth access token, when it is live and was issued for one of this
   * server's resources; null for anything else (unknown, expired, revoked, another audience).
   */
  async resolveAccessToken(token: string): Promise<({ userId: string; email: string; name: string | null; grantId: string } & TokenScope) | null> {
    const { provider } = await this.authorizationServer()
    const found = await provider.AccessToken.find(token)
    if (!found || found.isExpired || !found.accountId || !found.grantId) return null
    const audience = Array.isArray(found.aud) ? found.aud : [found.aud]
    if (!audience.some((aud) => typeof aud === 'string' && this.resources.includes(aud))) return null
    const [user, connection] = await Promise.all([this.options.users.findById(found.accountId), this.options.repo.findConnectionByGrant(found.grantId)])
    // A grant no connection records any more was replaced by a later consent (or removed): its tokens open nothing.
    if (!user || !connection) return null
    const now = Date.now()
    if (now - (this.touched.get(found.grantId) ?? 0) > TOUCH_INTERVAL_MS) {
      this.touched.set(found.grantId, now)
      await this.options.repo.touchConnection(found.grantId, new Date(now).toISOString())
    }
    // What the person let the app do on the consent page.
    return { userId: user.id, email: user.email, name: user.name, grantId: found.grantId, ...scopeOfRow(connection) }
  }

  /**
   * The consent step of an interaction for a signed-in person: the library's answer when the
   * person allowed this app before (nothing is asked again), else what the consent page shows.
   * NOT_FOUND when the app is not registered any more.
   */
  async consent(interaction: Interaction, userId: string): Promise<ConsentStep> {
    const asked = await this.asked(interaction, userId)
    if (asked.rememberedGrant) return { answer: await this.allow(userId, asked) }
    return { page: asked.page }
  }

  /** The library's answer to an interaction, from the person's decision. */
  async decide(interaction: Interaction, userId: string, allow: boolean, choice?: ConsentChoice): Promise<InteractionResults> {
    const asked = await this.asked(interaction, userId)
    if (!allow) return { error: 'access_denied', error_description: 'The person did not allow access.' }
    return this.allow(userId, asked, choice)
  }

  /** What an interaction asks, read once: its parameters, its app, and the person's earlier consent to that app. */
  private async asked(interaction: Interaction, userId: string) {
    const { provider } = await this.authorizationServer()
    const clientId = String(interaction.params.client_id)
    const client = await provider.Client.find(clientId)
    if (!client) throw new AppError('NOT_FOUND', 'This app is not registered any more. Start connecting again from the app.')
    const asked = interaction.params.redirect_uri
    const redirectUri = typeof asked === 'string' ? asked : (client.redirectUris?.[0] ?? '')
    const connection = await this.options.repo.findConnection(userId, clientId)
    const grant = connection ? await provider.Grant.find(connection.grant_id) : undefined
    const resources = this.requestedResources(interaction.params)
    const scope = typeof interaction.params.scope === 'string' ? interaction.params.scope : ''
    // Remembered while the grant holds every scope of the resources asked now; asking for more asks the person again.
    const wanted = [SCOPE, ...scope.split(' ').filter((one) => CAPABILITY_SCOPES.includes(one))]
    const rememberedGrant =
      grant && resources.every((resource) => wanted.every((one) => grant.getResourceScopeFiltered(resource, [one]).length > 0)) ? grant : undefined
    const device = interaction.deviceCode !== undefined
    const page: ConsentRequest = {
      uid: interaction.uid,
      clientId,
      clientName: client.clientName ?? clientId,
      redirectHost: device ? '' : redirectHost(redirectUri),
      device,
      capabilities: capabilitiesOfScope(scope),
    }
    return { params: interaction.params, page, resources, rememberedGrant, connection }
  }

  /** The resources an authorization asks for (the library refused any other before the person saw it). */
  private requestedResources(params: Record<string, unknown>): string[] {
    const asked = Array.isArray(params.resource) ? (params.resource as unknown[]) : [params.resource]
    const known = asked.filter((resource): resource is string => typeof resource === 'string' && this.resources.includes(resource))
    return known.length > 0 ? known : [this.resource]
  }

  /** Records the grant (the remembered one, widened to what this request asks) and the connection the dashboard lists. */
  private async allow(userId: string, asked: Awaited<ReturnType<OAuthService['asked']>>, choice?: ConsentChoice): Promise<InteractionResults> {
    const { params, page } = asked
    // The person's choice; else, let through as before, what they chose then; else what the app asked.
    const chosen: ConsentChoice =
      choice ??
      (asked.rememberedGrant && asked.connection ? scopeOfRow(asked.connection) : { capabilities: storedCapabilities(page.capabilities), sites: null })
    const { provider } = await this.authorizationServer()
    // One grant per person and app.
    const grant = asked.rememberedGrant ?? new provider.Grant({ accountId: userId, clientId: page.clientId })
    const requested = (typeof params.scope === 'string' ? params.scope : '').split(' ')
    // Every token carries `mcp` (the resource's scope) and the scope of each capability the person allowed;
    // the others asked for are recorded as refused, so that the library does not ask again.
    const allowed = new Set([SCOPE, ...(chosen.capabilities ?? CAPABILITIES).map(capabilityScope)])
    const refused = requested.filter((scope) => CAPABILITY_SCOPES.includes(scope) && !allowed.has(scope))
    const oidcScopes = requested.filter((scope) => SUPPORTED_SCOPES.includes(scope) && !refused.includes(scope))
    if (oidcScopes.length) grant.addOIDCScope(oidcScopes.join(' '))
    if (refused.length) grant.rejectOIDCScope(refused.join(' '))
    if (oidcScopes.includes('openid')) grant.addOIDCClaims(['sub'])
    for (const resource of asked.resources) {
      grant.addResourceScope(resource, [...allowed].join(' '))
      if (refused.length) grant.rejectResourceScope(resource, refused.join(' '))
    }
    const grantId = await grant.save()
    const at = nowIso()
    // An upsert: a connection made before keeps its first use.
    await this.options.repo.saveConnection({
      user_id: userId,
      client_id: page.clientId,
      grant_id: grantId,
      client_name: page.clientName,
      redirect_host: page.redirectHost,
      first_used_at: at,
      last_used_at: at,
      capabilities: chosen.capabilities && JSON.stringify(chosen.capabilities),
      sites: chosen.sites && JSON.stringify(chosen.sites),
    })
    // Asked again, the person's new answer replaces the old one: the grant it replaces, with its tokens, is gone.
    if (asked.connection && asked.connection.grant_id !== grantId) await this.options.repo.removeGrant(asked.connection.grant_id)
    return { login: { accountId: userId }, consent: { grantId } }
  }

  connections(userId: string): Promise<OAuthConnectionRow[]> {
    return this.options.repo.listConnections(userId)
  }

  /** Disconnects an app: its grant, codes and tokens are gone at once. NOT_FOUND when not connected. */
  async disconnect(userId: string, clientId: string): Promise<void> {
    if ((await this.options.repo.removeConnections(userId, clientId)) === 0) throw new AppError('NOT_FOUND', 'This app is not connected.')
  }

  /** Disconnects every app of a person (sign out everywhere, password change). */
  async disconnectAll(userId: string): Promise<void> {
    await this.options.repo.removeConnections(userId)
  }

  private configuration(library: AuthorizationServer['library'], cookieKey: string, jwk: JWK): Configuration {
    const resources = this.resources
    const { errors, interactionPolicy } = library
    const policy = interactionPolicy.base()
    // Every authorization goes through Plinth's own sign-in and consent page, which checks the
    // web site's session; oidc-provider's own session never signs anyone in by itself.
    policy
      .get('login')!
      .checks.add(
        new interactionPolicy.Check('plinth_sign_in', 'The person signs in on the web site', (ctx) =>
          ctx.oidc.result?.login ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
        ),
      )
    return {
      adapter: oauthAdapter(this.options.db),
      findAccount: async (_ctx, id) => {
        const user = await this.options.users.findById(id)
        return user ? { accountId: user.id, claims: () => ({ sub: user.id, email: user.email, name: user.name ?? undefined }) } : undefined
      },
      clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
      clientAuthMethods: ['none'],
      responseTypes: ['code'],
      pkce: { required: () => true },
      scopes: SUPPORTED_SCOPES,
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true, idFactory: () => `cli_${randomBase62(22)}`, issueRegistrationAccessToken: false },
        clientIdMetadataDocument: {
          enabled: true,
          ack: 'draft-02',
        },
        // A client revokes its own tokens only; any other is ignored, as an unknown token is (RFC 7009).
        revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
        deviceFlow: deviceFlowFeature(this.options.pages),
        userinfo: { enabled: false },
        // Plinth's sign-out is the web site's; the library's session ends with each authorization.
        rpInitiatedLogout: { enabled: false },
        resourceIndicators: {
          enabled: true,
          // RFC 8707: the resource is required; a token endpoint request may leave it out and
          // get the one granted.
          defaultResource: (ctx: KoaContextWithOIDC, _client: unknown, oneOf?: string[]) => {
            if (oneOf) return oneOf
            if (ctx.oidc.route === 'authorization' || ctx.oidc.route === 'device_authorization') {
              throw new errors.InvalidTarget(`resource is required: ${resources.join(' or ')}`)
            }
            return undefined
          },
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => {
            if (!resources.includes(indicator)) throw new errors.InvalidTarget(`this server issues tokens for ${resources.join(' and ')} only`)
            return { scope: SCOPES_SUPPORTED.join(' '), audience: indicator, accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS, accessTokenFormat: 'opaque' }
          },
        },
      },
      fetch: (url, _options) => this.fetchDocument(typeof url === 'string' ? url : url instanceof URL ? url.href : url.url),
      // A sign-in lasts as its tokens say (docs/guide/mcp.md), not as long as the browser visit
      // that allowed it: the library's session is the visit, and Disconnect or logout ends a grant.
      expiresWithSession: () => false,
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      ttl: {
        AccessToken: ACCESS_TOKEN_TTL_SECONDS,
        AuthorizationCode: AUTHORIZATION_CODE_TTL_SECONDS,
        RefreshToken: REFRESH_TOKEN_TTL_SECONDS,
        Grant: GRANT_TTL_SECONDS,
        Interaction: INTERACTION_TTL_SECONDS,
        Session: INTERACTION_TTL_SECONDS,
        IdToken: ACCESS_TOKEN_TTL_SECONDS,
        DeviceCode: DEVICE_CODE_TTL_SECONDS,
      },
      interactions: { policy, url: (_ctx, interaction) => `/connect/${interaction.uid}` },
      routes: OAUTH_ROUTES,
      cookies: {
        keys: [cookieKey],
        names: { session: 'plinth_oauth_session', interaction: 'plinth_oauth_interaction', resume: 'plinth_oauth_resume' },
      },
      jwks: { keys: [jwk] },
      renderError: errorPage(this.options.pages),
    } as Configuration
  }

  /** Client ID metadata documents are fetched as images are: public addresses only, small, quick. */
  private async fetchDocument(url: string): Promise<Response> {
    const result = await safeFetch(url, {
      allowHosts: new Set(this.options.config.fetchAllowHosts),
      maxBytes: 5120,
      connectTimeoutMs: 2500,
      totalTimeoutMs: 2500,
      maxRedirects: 0,
      accept: 'application/json',
      userAgent: `Plinth/1.0 (+${this.options.config.siteUrl})`,
      ca: this.options.fetchCa,
    })
    return new Response(new Uint8Array(result.bytes), { status: result.status, headers: result.contentType ? { 'content-type': result.contentType } : {} })
  }
}
