/**
 * Signing the `plinth` commands in to a server with OAuth, through openid-client: the server's
 * protected-resource metadata (RFC 9728) names the REST API's resource and its authorization
 * server; each login registers a client of its own (dynamic registration, RFC 7591), so that
 * every machine is one app on the dashboard, disconnected on its own, and a logout revokes only
 * its own tokens.
 *
 * - Browser: authorization code with PKCE S256, the answer taken on a loopback redirect URI
 *   (`http://127.0.0.1:{ephemeral port}/callback`, RFC 8252), its `state` checked.
 * - Device (RFC 8628): a user code the person enters at the server's `/oauth/device` page on any
 *   device, while the command polls the token endpoint.
 *
 * The access token is bound to the REST API's resource (`{base_url}`); it reaches MCP too.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import * as oauth from 'openid-client'
import { ApiError } from './api-client.ts'
import type { StoredLogin } from './stored-login.ts'

/** How long the command waits for the person to answer in the browser. */
const BROWSER_WAIT_MS = 10 * 60 * 1000
/** Refresh an access token this long before it expires. */
const EXPIRY_MARGIN_MS = 60_000
const SCOPE = 'mcp'
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** A login that failed: one line that says why. Nothing is stored. */
export class LoginError extends Error {}

export interface LoginIo {
  /** Lines for the person (the URL to open, the code to enter). */
  tell: (line: string) => void
  /** Opens a URL in the browser; false when there is none to open. */
  openBrowser: (url: string) => boolean
}

/** Where the server is and how to talk to its authorization server. */
interface Server {
  url: string
  resource: string
  issuer: URL
  options: oauth.DiscoveryRequestOptions
}

/** The server at `url`: its REST API's resource and authorization server, from its protected-resource metadata. */
async function findServer(url: string): Promise<Server> {
  const metadataUrl = `${url}/.well-known/oauth-protected-resource`
  let metadata: { resource?: unknown; authorization_servers?: unknown }
  try {
    const response = await fetch(metadataUrl, { headers: { accept: 'application/json' } })
    if (!response.ok) throw new Error(`it answered ${response.status}`)
    metadata = (await response.json()) as typeof metadata
  } catch (error) {
    throw new LoginError(`${url} does not look like a Plinth server: ${metadataUrl} failed (${reason(error)})`)
  }
  const issuer: unknown = Array.isArray(metadata.authorization_servers) ? (metadata.authorization_servers as unknown[])[0] : undefined
  if (metadata.resource !== url || typeof issuer !== 'string' || !URL.canParse(issuer)) {
    throw new LoginError(`${url} does not name itself in ${metadataUrl}: give its address exactly as the server's base URL`)
  }
  const issuerUrl = new URL(issuer)
  // A server on plain http (a local or intranet instance) is reached as it is configured.
  const options: oauth.DiscoveryRequestOptions = { algorithm: 'oauth2', execute: issuerUrl.protocol === 'http:' ? [oauth.allowInsecureRequests] : [] }
  return { url, resource: url, issuer: issuerUrl, options }
}

/** Registers this login's client. */
async function register(server: Server, metadata: Partial<oauth.ClientMetadata>): Promise<oauth.Configuration> {
  const clientName = `Plinth CLI on ${os.hostname()}`.slice(0, 100)
  try {
    return await oauth.dynamicClientRegistration(
      server.issuer,
      { client_name: clientName, token_endpoint_auth_method: 'none', application_type: 'native', ...metadata },
      oauth.None(),
      server.options,
    )
  } catch (error) {
    throw new LoginError(`could not register with ${server.url}: ${reason(error)}`)
  }
}

/** The configuration of an earlier login's client, for refreshing or revoking its tokens. */
async function configurationOf(login: StoredLogin): Promise<oauth.Configuration> {
  const issuer = new URL(login.issuer)
  const options: oauth.DiscoveryRequestOptions = { algorithm: 'oauth2', execute: issuer.protocol === 'http:' ? [oauth.allowInsecureRequests] : [] }
  return oauth.discovery(issuer, login.clientId, { token_endpoint_auth_method: 'none' }, oauth.None(), options)
}

function stored(server: Server, config: oauth.Configuration, tokens: oauth.TokenEndpointResponse): StoredLogin {
  return {
    url: server.url,
    issuer: config.serverMetadata().issuer,
    resource: server.resource,
    clientId: config.clientMetadata().client_id,
    accessToken: tokens.access_token,
    ...(tokens.refresh_token !== undefined && { refreshToken: tokens.refresh_token }),
    ...(tokens.expires_in !== undefined && { expiresAt: new Date(Date.now() + tokens.expires_in * 1000).toISOString() }),
  }
}

/** Signs in through the browser: the person signs in and allows the app; the answer comes back to a loopback server. */
export async function loginWithBrowser(url: string, io: LoginIo): Promise<StoredLogin> {
  const server = await findServer(url)
  const verifier = oauth.randomPKCECodeVerifier()
  const state = oauth.randomState()
  const loopback = await Loopback.start()
  try {
    const config = await register(server, {
      redirect_uris: [loopback.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    })
    const authorizationUrl = oauth.buildAuthorizationUrl(config, {
      redirect_uri: loopback.redirectUri,
      scope: SCOPE,
      resource: server.resource,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    })
    const opened = io.openBrowser(authorizationUrl.href)
    io.tell(
      `${opened ? 'Opening your browser to sign in. If it does not open, go to' : 'To sign in, open this address in a browser'}:\n  ${authorizationUrl.href}`,
    )
    const answer = await loopback.next(BROWSER_WAIT_MS)
    try {
      if (answer.url.searchParams.get('state') !== state) {
        throw new LoginError('the browser came back with an answer that does not belong to this login (its state does not match); nothing was stored')
      }
      const denied = answer.url.searchParams.get('error')
      if (denied !== null) throw new LoginError(deniedLine(denied, answer.url.searchParams.get('error_description')))
      const tokens = await oauth.authorizationCodeGrant(config, answer.url, { pkceCodeVerifier: verifier, expectedState: state }, { resource: server.resource })
      answer.respond(true, 'Signed in. You can close this window and go back to your terminal.')
      return stored(server, config, tokens)
    } catch (error) {
      const line = error instanceof LoginError ? error.message : `the server refused the sign-in: ${reason(error)}`
      answer.respond(false, `Sign-in failed: ${line}.`)
      throw new LoginError(line)
    }
  } finally {
    await loopback.close()
  }
}

/** Signs in with a device code: the person enters it at the server's device page, on any device. */
export async function loginWithDevice(url: string, io: LoginIo): Promise<StoredLogin> {
  const server = await findServer(url)
  const config = await register(server, { grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] })
  let authorization: oauth.DeviceAuthorizationResponse
  try {
    authorization = await oauth.initiateDeviceAuthorization(config, { scope: SCOPE, resource: server.resource })
  } catch (error) {
    throw new LoginError(`the server refused a device sign-in: ${reason(error)}`)
  }
  const minutes = Math.round(authorization.expires_in / 60)
  io.tell(
    `To sign in, open ${authorization.verification_uri} on any device and enter the code\n\n    ${authorization.user_code}\n\n` +
      `(or open ${authorization.verification_uri_complete ?? authorization.verification_uri}). The code expires in ${minutes} minute${minutes === 1 ? '' : 's'}. Waiting...`,
  )
  try {
    const tokens = await oauth.pollDeviceAuthorizationGrant(
      config,
      authorization,
      { resource: server.resource },
      { signal: AbortSignal.timeout(authorization.expires_in * 1000) },
    )
    return stored(server, config, tokens)
  } catch (error) {
    const code = error instanceof oauth.ResponseBodyError ? error.error : error instanceof Error && error.name === 'TimeoutError' ? 'expired_token' : null
    if (code === 'expired_token' || code === 'invalid_grant')
      throw new LoginError('the sign-in code expired before anyone confirmed it; nothing was stored (run plinth login again)')
    if (code === 'access_denied') throw new LoginError('the sign-in was denied in the browser; nothing was stored')
    throw new LoginError(`the device sign-in failed: ${reason(error)}`)
  }
}

/** The login with a live access token: refreshed (and the new tokens returned) when it has expired. */
export function needsRefresh(login: StoredLogin, now = Date.now()): boolean {
  return login.refreshToken !== undefined && login.expiresAt !== undefined && Date.parse(login.expiresAt) - EXPIRY_MARGIN_MS <= now
}

/** New tokens for an expired login (the refresh token rotates). An ApiError 401 when the server refuses it. */
export async function refreshLogin(login: StoredLogin): Promise<StoredLogin> {
  if (login.refreshToken === undefined) return login
  let tokens: oauth.TokenEndpointResponse
  try {
    tokens = await oauth.refreshTokenGrant(await configurationOf(login), login.refreshToken, { resource: login.resource })
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) {
      throw new ApiError(401, 'AUTH_REQUIRED', `your login to ${login.url} has expired or was revoked: run plinth login`)
    }
    throw new ApiError(0, 'NETWORK', `could not renew your login at ${login.url}: ${reason(error)}`)
  }
  return {
    ...login,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? login.refreshToken,
    ...(tokens.expires_in !== undefined && { expiresAt: new Date(Date.now() + tokens.expires_in * 1000).toISOString() }),
  }
}

/** Revokes a login's tokens at its server (RFC 7009): the refresh token ends the whole grant, the access token with it. */
export async function revokeLogin(login: StoredLogin): Promise<void> {
  const config = await configurationOf(login)
  if (login.refreshToken !== undefined) await oauth.tokenRevocation(config, login.refreshToken, { token_type_hint: 'refresh_token' })
  await oauth.tokenRevocation(config, login.accessToken, { token_type_hint: 'access_token' })
}

function deniedLine(error: string, description: string | null): string {
  if (error === 'access_denied') return 'the sign-in was denied in the browser; nothing was stored'
  return `the server refused the sign-in (${error}${description ? `: ${description}` : ''}); nothing was stored`
}

/** Why a request failed, in one phrase: the OAuth error and its description, or the network's code. */
export function reason(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError) {
    return error.error_description ? `${error.error}: ${error.error_description}` : error.error
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (error as Error).message
}

/** The loopback redirect URI: a server on 127.0.0.1 that takes the browser's one answer. */
class Loopback {
  private waiting: ((answer: { url: URL; respond: (ok: boolean, message: string) => void }) => void) | null = null

  private constructor(
    private readonly server: http.Server,
    readonly redirectUri: string,
  ) {
    server.on('request', (req, res) => {
      const url = new URL(req.url ?? '/', redirectUri)
      // Only the redirect itself: a browser also asks for /favicon.ico and the like.
      if (url.pathname !== '/callback' || req.method !== 'GET' || this.waiting === null) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end('Not found')
        return
      }
      const resolve = this.waiting
      this.waiting = null
      resolve({
        url,
        respond: (ok, message) => {
          const title = ok ? 'Signed in' : 'Sign-in failed'
          res
            .writeHead(ok ? 200 : 400, {
              'content-type': 'text/html; charset=utf-8',
              'cache-control': 'no-store',
              'content-security-policy': "default-src 'none'",
              connection: 'close',
            })
            .end(`<!doctype html><html lang="en"><meta charset="utf-8"><title>${title} · Plinth</title><h1>${title}</h1><p>${escapeHtml(message)}</p></html>`)
        },
      })
    })
  }

  static async start(): Promise<Loopback> {
    const server = http.createServer()
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve))
    return new Loopback(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`)
  }

  /** The browser's answer, with a way to show the person how it ended. */
  next(timeoutMs: number): Promise<{ url: URL; respond: (ok: boolean, message: string) => void }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = null
        reject(new LoginError(`no answer from the browser in ${timeoutMs / 60_000} minutes; nothing was stored`))
      }, timeoutMs)
      this.waiting = (answer) => {
        clearTimeout(timer)
        resolve(answer)
      }
    })
  }

  async close(): Promise<void> {
    // Answers close their connection once sent; idle ones (a browser's spare) are closed now.
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    this.server.closeIdleConnections()
    await closed
  }
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
