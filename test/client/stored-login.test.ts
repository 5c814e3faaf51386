/**
 * Where `plinth login` keeps its login and how the client commands choose their credentials: the
 * XDG config folder (a relative XDG_CONFIG_HOME ignored), owner-only modes even under a loose
 * umask or over a folder made before, a damaged file read as no login, and a stored token sent
 * only to its own server, never where --token or PLINTH_TOKEN is given.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, describe, test } from 'node:test'
import { credentials } from '../../src/client/login-commands.ts'
import { loginFile, loginFolder, readLogin, removeLogin, type StoredLogin, writeLogin } from '../../src/client/stored-login.ts'

const root = mkdtempSync(path.join(os.tmpdir(), 'plinth-stored-login-'))
after(() => rmSync(root, { recursive: true, force: true }))

const LOGIN: StoredLogin = {
  url: 'https://plinth.example.com',
  issuer: 'https://plinth.example.com',
  resource: 'https://plinth.example.com',
  clientId: 'cli_abc',
  accessToken: 'access-token-value',
  refreshToken: 'refresh-token-value',
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
}

describe('the stored login', () => {
  test('lives in $XDG_CONFIG_HOME/plinth, else ~/.config/plinth; a relative XDG_CONFIG_HOME is ignored', () => {
    assert.equal(loginFile({ XDG_CONFIG_HOME: '/x/config', HOME: '/home/a' }), '/x/config/plinth/login.json')
    assert.equal(loginFolder({ HOME: '/home/a' }), '/home/a/.config/plinth')
    assert.equal(loginFolder({ XDG_CONFIG_HOME: 'relative', HOME: '/home/a' }), '/home/a/.config/plinth')
  })

  test('is written owner-only, even under a loose umask and over a folder made before, and read back', async () => {
    const env = { XDG_CONFIG_HOME: path.join(root, 'a') }
    mkdirSync(path.join(root, 'a', 'plinth'), { recursive: true, mode: 0o777 })
    const umask = process.umask(0)
    try {
      await writeLogin(env, LOGIN)
    } finally {
      process.umask(umask)
    }
    assert.equal(statSync(loginFile(env)).mode & 0o777, 0o600)
    assert.equal(statSync(loginFolder(env)).mode & 0o777, 0o700)
    assert.deepEqual(await readLogin(env), LOGIN)
    assert.deepEqual(readdirSync(loginFolder(env)), ['login.json'], 'no temporary file is left')
    assert.equal(await removeLogin(env), true)
    assert.equal(await removeLogin(env), false, 'removing twice is no failure')
    assert.equal(await readLogin(env), null)
  })

  test('a damaged or incomplete file is no login', async () => {
    const env = { XDG_CONFIG_HOME: path.join(root, 'b') }
    mkdirSync(loginFolder(env), { recursive: true })
    writeFileSync(loginFile(env), '{"url": "https://plinth.example.com"')
    assert.equal(await readLogin(env), null)
    writeFileSync(loginFile(env), JSON.stringify({ url: 'https://plinth.example.com', accessToken: 42 }))
    assert.equal(await readLogin(env), null)
  })
})

describe('the credentials of a client command', () => {
  const env = { XDG_CONFIG_HOME: path.join(root, 'c') }

  test('without a login or a token, the command is told to sign in', async () => {
    const found = await credentials({}, env)
    assert.ok('missing' in found)
    assert.match(found.missing, /^not signed in: run plinth login/)
  })

  test('the stored login names its server; a token given wins, on the URL given', async () => {
    await writeLogin(env, LOGIN)
    assert.deepEqual(await credentials({}, env), { baseUrl: LOGIN.url, token: LOGIN.accessToken, login: LOGIN })
    assert.deepEqual(await credentials({ url: `${LOGIN.url}/` }, env), { baseUrl: LOGIN.url, token: LOGIN.accessToken, login: LOGIN })
    assert.deepEqual(await credentials({ token: 'plinth_given' }, { ...env, PLINTH_URL: 'http://127.0.0.1:9' }), {
      baseUrl: 'http://127.0.0.1:9',
      token: 'plinth_given',
      login: null,
    })
    assert.deepEqual(await credentials({}, { ...env, PLINTH_TOKEN: 'plinth_env' }), { baseUrl: 'http://localhost:8080', token: 'plinth_env', login: null })
  })

  test('the stored token is never sent to another server', async () => {
    await writeLogin(env, LOGIN)
    const found = await credentials({ url: 'https://evil.example.net' }, env)
    assert.deepEqual(found, {
      missing:
        'you are signed in to https://plinth.example.com, not https://evil.example.net: run plinth login --url https://evil.example.net, or pass --token',
    })
    assert.ok('missing' in (await credentials({}, { ...env, PLINTH_URL: 'http://localhost:8080' })))
  })
})
