/**
 * The login `plinth login` stores: one server at a time, in `$XDG_CONFIG_HOME/plinth/login.json`
 * (else `~/.config/plinth/login.json`), the folder 0700 and the file 0600, written whole (a
 * temporary file renamed over it), so another user of the machine never reads it and a command
 * never reads half of it. A stored token is only ever sent to the server it was issued by.
 */
import { mkdir, open, readFile, rename, rm, stat, chmod } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export interface StoredLogin {
  /** The server as the commands name it (`--url`, PLINTH_URL), without a trailing slash. */
  url: string
  /** The authorization server that issued the tokens (the server's own, `{base_url}`). */
  issuer: string
  /** The resource the access token is bound to: the REST API's, `{base_url}`. */
  resource: string
  /** The client registered for this login (dynamic registration). */
  clientId: string
  accessToken: string
  refreshToken?: string
  /** When the access token expires (ISO 8601). */
  expiresAt?: string
}

/** Where logins are kept: `$XDG_CONFIG_HOME/plinth` when it is an absolute path, else `~/.config/plinth`. */
export function loginFolder(env: NodeJS.ProcessEnv): string {
  const config = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), '.config')
  return path.join(config, 'plinth')
}

export const loginFile = (env: NodeJS.ProcessEnv): string => path.join(loginFolder(env), 'login.json')

/** The stored login, or null when there is none (or it is unreadable as one). */
export async function readLogin(env: NodeJS.ProcessEnv): Promise<StoredLogin | null> {
  let text: string
  try {
    text = await readFile(loginFile(env), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  try {
    const login = JSON.parse(text) as Partial<StoredLogin>
    const complete = ['url', 'issuer', 'resource', 'clientId', 'accessToken'].every((key) => typeof login[key as keyof StoredLogin] === 'string')
    return complete ? (login as StoredLogin) : null
  } catch {
    return null
  }
}

/** Stores a login in place of any other: owner-only folder and file, written whole. */
export async function writeLogin(env: NodeJS.ProcessEnv, login: StoredLogin): Promise<string> {
  const folder = loginFolder(env)
  await mkdir(folder, { recursive: true, mode: 0o700 })
  // The folder is Plinth's own: made private even when something made it before.
  await chmod(folder, 0o700)
  const file = loginFile(env)
  const temporary = `${file}.${process.pid}.tmp`
  const handle = await open(temporary, 'w', 0o600)
  try {
    await handle.chmod(0o600)
    await handle.writeFile(`${JSON.stringify(login, null, 2)}\n`)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(temporary, file)
  return file
}

/** Removes the stored login; whether there was one. */
export async function removeLogin(env: NodeJS.ProcessEnv): Promise<boolean> {
  const file = loginFile(env)
  const existed = await stat(file).then(
    () => true,
    () => false,
  )
  await rm(file, { force: true })
  return existed
}

/** A lock held longer than this was left by a command that died. */
const STALE_LOCK_MS = 30_000
const LOCK_WAIT_MS = 20_000

/**
 * Runs `work` while no other plinth command of this user does the same: refresh tokens are
 * rotated at each use, and a second command refreshing with the same one would make the server
 * revoke the whole login (reuse detection).
 */
export async function withLoginLock<T>(env: NodeJS.ProcessEnv, work: () => Promise<T>): Promise<T> {
  const folder = loginFolder(env)
  await mkdir(folder, { recursive: true, mode: 0o700 })
  const lock = path.join(folder, 'login.lock')
  const deadline = Date.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      await (await open(lock, 'wx', 0o600)).close()
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const held = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      )
      if (held > STALE_LOCK_MS) await rm(lock, { force: true })
      else if (Date.now() > deadline) throw new Error(`another plinth command holds ${lock}; remove it if no plinth command is running`, { cause: error })
      else await sleep(100)
    }
  }
  try {
    return await work()
  } finally {
    await rm(lock, { force: true })
  }
}
