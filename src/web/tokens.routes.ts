/**
 * The token page at `{site_url}/mcp` (a browser's GET; the MCP endpoint answers everything else
 * there): a signed-out visitor learns what it is and is asked to sign in; a signed-in person
 * mints tokens (shown once, with ready-made client configs) and revokes them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { scopeOfRow, type TokensService, tokenState } from '../auth/tokens.service.ts'
import { CAPABILITIES, DEFAULT_TOKEN_ACCESS, TOKEN_ACCESS, type TokenAccess } from '../core/enums.ts'
import { AppError } from '../core/errors.ts'
import type { WebsiteQueries } from '../websites/website-queries.ts'
import { accountOf, checked, field } from './forms.ts'
import { capabilityChoices, chosenScope, siteChoices } from './token-scope.ts'
import { sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

/** Expiry choices offered by the form, in days (0: never). */
const EXPIRY_DAYS = [0, 7, 30, 90, 365]
const DAY_MS = 24 * 60 * 60 * 1000
/** How each token access reads, in the order the form offers them. */
const ACCESS_LABELS: Readonly<Record<TokenAccess, string>> = { both: 'REST API and MCP', mcp: 'MCP only', rest: 'REST API only' }
const ACCESS_CHOICES = Object.entries(ACCESS_LABELS).map(([value, label]) => ({ value, label }))

/** The capabilities a refused form had ticked, to tick them again. */
const checkedCapabilities = (request: FastifyRequest) => CAPABILITIES.filter((c) => checked(request, 'capabilities').includes(c))

export function tokenRoutes(web: WebContext, tokens: TokensService, websites: Pick<WebsiteQueries, 'list'>) {
  const { config } = web
  const mcpUrl = `${config.baseUrl}/mcp`

  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) => {
    const account = request.account
    const rows = account ? await tokens.list(account.userId) : []
    const sites = account ? await siteChoices(websites, account, (extra.chosenSites as string[] | undefined) ?? []) : []
    const siteNames = new Map(sites.map((site) => [site.value, site.label]))
    const list = rows.map((t) => ({
      id: t.id,
      name: t.name,
      hint: `${t.token_hint}…`,
      access: ACCESS_LABELS[t.access],
      createdAt: t.created_at,
      lastUsedAt: t.last_used_at,
      expiresAt: t.expires_at,
      state: tokenState(t),
      capabilities: scopeOfRow(t).capabilities?.join(', ') ?? 'Everything',
      sites:
        scopeOfRow(t)
          .sites?.map((id) => siteNames.get(id) ?? id)
          .join(', ') ?? 'All sites',
    }))
    const data = {
      title: 'Access tokens · Plinth',
      mcpUrl,
      apiUrl: `${config.baseUrl}/v1`,
      tokens: list,
      expiryDays: EXPIRY_DAYS,
      accessChoices: ACCESS_CHOICES,
      form: { access: DEFAULT_TOKEN_ACCESS },
      capabilityChoices: capabilityChoices((extra.chosenCapabilities as never) ?? null),
      siteChoices: sites,
      ...extra,
    }
    return sendPage(reply, pageContext(web, request, reply), 'tokens', data, { status })
  }

  /** GET /mcp from a browser; mounted by the MCP routes, which own that path. */
  const page = (request: FastifyRequest, reply: FastifyReply) => listPage(request, reply, { revoked: (request.query as { revoked?: string })?.revoked === '1' })

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  const routes = async (app: FastifyInstance) => {
    app.post('/mcp/tokens', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      const access = field(request, 'access') || DEFAULT_TOKEN_ACCESS
      const days = Number(field(request, 'expires') || '0')
      const name = field(request, 'name')
      try {
        const scope = chosenScope(request)
        if (!TOKEN_ACCESS.includes(access as never)) throw new AppError('VALIDATION_FAILED', 'Choose REST, MCP or both.')
        if (!EXPIRY_DAYS.includes(days)) throw new AppError('VALIDATION_FAILED', 'Choose one of the offered expiry times.')
        const expiresAt = days ? new Date(Date.now() + days * DAY_MS).toISOString() : null
        const { token, row } = await tokens.create(account.userId, { name: name || undefined, access, expiresAt, ...scope })
        reply.header('Referrer-Policy', 'no-referrer')
        const data = {
          title: 'Your new token · Plinth',
          // Shown once: a reload asks for the token list, not for another token.
          reloadAddress: '/mcp',
          token,
          mcpUrl,
          apiUrl: `${config.baseUrl}/v1`,
          created: {
            name: row.name,
            access: ACCESS_LABELS[row.access],
            expiresAt: row.expires_at,
            capabilities: scopeOfRow(row).capabilities?.join(', ') ?? 'Everything',
            sites: scopeOfRow(row).sites?.length ?? 0,
          },
        }
        return sendPage(reply, pageContext(web, request, reply), 'token-created', data, { status: 201 })
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'VALIDATION_FAILED') throw error
        const message = error.fields
          ? Object.entries(error.fields)
              .map(([k, v]) => `${k === 'name' ? 'The name' : k === 'capabilities' ? 'What it may do:' : k === 'sites' ? 'The sites:' : k} ${v}.`)
              .join(' ')
          : error.message
        const chosenCapabilities = field(request, 'scoped') === '1' ? checkedCapabilities(request) : null
        return listPage(
          request,
          reply,
          { error: { message }, form: { name, access, expires: days }, chosenCapabilities, chosenSites: checked(request, 'sites') },
          422,
        )
      }
    })

    app.post<{ Params: { tokenId: string } }>('/mcp/tokens/:tokenId/revoke', { schema: { hide: true } }, async (request, reply) => {
      const account = accountOf(request)
      await tokens.revoke(account.userId, request.params.tokenId)
      return reply.redirect('/mcp?revoked=1', 303)
    })
  }

  return { page, routes }
}
