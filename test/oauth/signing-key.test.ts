/**
 * The OAuth signing key is made at an instance's first start. Made as a KeyObject and exported
 * to a JWK afterwards, it could hang the process for good on Node 20 (see newSigningJwk): a
 * garbage collection during the export finalized the job that made the key, which waited for the
 * lock the export held. A test run hung so, and a plain script doing that export under the
 * garbage collections below hung within about 1,000 keys in each of its runs. Here a child makes
 * 3,000 keys with newSigningJwk while its collections come often and at random points: it must
 * finish, and every key must be a private RSA JWK. (The hang depends on where a collection
 * lands, so this child does not hang on every run of the old code.)
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'

const ROOT = path.resolve(import.meta.dirname, '../..')
const KEYS = 3000

const CHILD = `
import { newSigningJwk } from './src/oauth/oauth.service.ts'
let garbage = []
for (let i = 0; i < ${KEYS}; i++) {
  // Garbage of a random size before each key, so the next collection lands at a random allocation.
  for (let j = 0, n = Math.random() * 2000; j < n; j++) garbage.push({ j })
  if (garbage.length > 5000) garbage = []
  const jwk = newSigningJwk(512)
  if (jwk.kty !== 'RSA' || typeof jwk.d !== 'string' || typeof jwk.n !== 'string') throw new Error('not a private RSA JWK: ' + JSON.stringify(jwk))
}
console.log('made ${KEYS} keys')
`

test('making signing keys while garbage collections run often never hangs the process', () => {
  const child = spawnSync(process.execPath, ['--max-semi-space-size=1', '--import', 'tsx', '--input-type=module', '-e', CHILD], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 90_000,
  })
  assert.equal(child.signal, null, `the child was stopped after 90 s: it hung (${child.stdout}${child.stderr.slice(-1000)})`)
  assert.equal(child.status, 0, child.stderr.slice(-2000))
  assert.match(child.stdout, new RegExp(`made ${KEYS} keys`))
})
