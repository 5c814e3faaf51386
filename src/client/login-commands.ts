/**
 * `plinth login`, `plinth logout`, and the credentials every other client command uses: `--token`
 * or PLINTH_TOKEN when given (on `--url`, PLINTH_URL or the default server), else the stored
 * login (stored-login.ts), renewed first when its access token has expired. A stored token is
 * sent only to the server that issued it.
 */
import { ApiError } from './api-client.ts'
import { openInBrowser, browserCommand } from './browser.ts'
import { LoginError, loginWithBrowser, loginWithDevice, needsRefresh, reason, refreshLogin, revokeLogin } from './login.ts'
import { loginFile, readLogin, removeLogin, type StoredLogin, withLoginLock, writeLogin } from './stored-login.ts'

export const DEFAULT_URL = 'http://localhost:8080'

/** `--url` as typed, without trailing slashes: the key a login is stored under. */
export const serverUrl = (url: string): string => url.replace(/\/+$/, '')

export interface Credentials {
  baseUrl: string
  token: string
  /** The stored login the token comes from, when it does. */
  login: StoredLogin | null
}

/** The server and token a command uses; null when there is none (no token given, no login stored for that server). */
export async function credentials(values: { url?: string; token?: string }, env: NodeJS.ProcessEnv): Promise<Credentials | { missing: string }> {
  const url = values.url ?? (env.PLINTH_URL || undefined)
  const token = values.token ?? (env.PLINTH_TOKEN || undefined)
  if (token !== undefined) return { baseUrl: serverUrl(url ?? DEFAULT_URL), token, login: null }
  let login = await readLogin(env)
  if (login === null) return { missing: 'not signed in: run plinth login, or pass --token or set PLINTH_TOKEN (mint one on the web site, Tokens)' }
  if (url !== undefined && serverUrl(url) !== login.url) {
    return { missing: `you are signed in to ${login.url}, not ${serverUrl(url)}: run plinth login --url ${serverUrl(url)}, or pass --token` }
  }
  if (needsRefresh(login)) {
    login = await withLoginLock(env, async () => {
      // Another command may have renewed it while this one waited.
      const current = (await readLogin(env)) ?? login!
      if (!needsRefresh(current)) return current
      const renewed = await refreshLogin(current)
      await writeLogin(env, renewed)
      return renewed
    })
  }
  return { baseUrl: login.url, token: login.accessToken, login }
}

/** A refusal of a stored login's token: it was revoked or ran out, so the person signs in again. */
export function staleLogin(error: unknown, login: StoredLogin | null): unknown {
  if (login !== null && error instanceof ApiError && error.status === 401) {
    return new ApiError(401, error.code, `your login to ${login.url} is no longer valid (revoked or expired): run plinth login`)
  }
  return error
}

export interface LoginOutput {
  out: (text: string) => void
  err: (text: string) => void
  env: NodeJS.ProcessEnv
}

/**
 * Signs in to `url` through the browser, or with a device code when asked (`device`) or when this
 * machine has no browser to open, and stores the login in place of any earlier one (whose tokens
 * are revoked, as far as its server answers). The stored file is the only output; stdout says where.
 */
export async function login(url: string, device: boolean, io: LoginOutput): Promise<StoredLogin> {
  const io2 = { tell: (line: string) => io.err(line), openBrowser: (target: string) => openInBrowser(target, io.env) }
  const useDevice = device || browserCommand(io.env) === null
  if (!device && useDevice) io.err('No browser to open here: signing in with a code you enter on another device.')
  const signedIn = useDevice ? await loginWithDevice(url, io2) : await loginWithBrowser(url, io2)
  const earlier = await readLogin(io.env)
  const file = await writeLogin(io.env, signedIn)
  // The earlier login's tokens are no longer stored anywhere: ended at their server too.
  if (earlier !== null) await revokeLogin(earlier).catch(() => {})
  io.out(`Signed in to ${signedIn.url}. The login is stored in ${file} (yours only).`)
  return signedIn
}

/** Revokes the stored login at its server and removes it; signed out already is no failure. */
export async function logout(io: LoginOutput): Promise<number> {
  const stored = await readLogin(io.env)
  if (stored === null) {
    await removeLogin(io.env)
    io.out('Not signed in: nothing to do.')
    return 0
  }
  let revoked: string | null = null
  try {
    await revokeLogin(stored)
  } catch (error) {
    revoked = reason(error)
  }
  await removeLogin(io.env)
  if (revoked !== null) {
    io.err(
      `plinth: removed ${loginFile(io.env)}, but ${stored.url} could not revoke the login (${revoked}); disconnect "Plinth CLI" on the dashboard to end it now`,
    )
    return 1
  }
  io.out(`Signed out of ${stored.url}: the login is revoked and removed.`)
  return 0
}

export { LoginError }
