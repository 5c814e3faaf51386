/**
 * The OAuth signing key is made at an instance's first start. Made as a KeyObject and exported
 * to a JWK afterwards, it could hang the process for good on Node 20 (see newSigningJwk): a full
 * garbage collection during the export finalized the job that made the key, which waited for the
 * lock the export held. Here a child makes keys with newSigningJwk while every collection is a
 * full one (--gc-global) and, before each key, fills the young generation to a random few
 * kilobytes short of its limit, so that the next collection lands while that key is being made:
 * it must finish, and every key must be a private RSA JWK. Made the old way, a run of these keys
 * hangs within its first few hundred.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'

const ROOT = path.resolve(import.meta.dirname, '../..')
const KEYS = 500

const CHILD = `
import { getHeapSpaceStatistics } from 'node:v8'
import { newSigningJwk } from './src/oauth/signing-key.ts'
const youngSpaceLeft = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_available_size ?? 0
for (let i = 0; i < ${KEYS}; i++) {
  // Garbage up to a random 2 to 20 kB short of the young generation's limit (a bounded number of steps).
  const room = 2000 + Math.random() * 18000
  let garbage = []
  for (let left = youngSpaceLeft(), steps = 0; left > room && steps < 1000; left = youngSpaceLeft(), steps++) {
    garbage.push(new Array(Math.max(1, Math.min(1000, Math.floor((left - room) / 16)))))
  }
  garbage = null
  const jwk = newSigningJwk(512)
  if (jwk.kty !== 'RSA' || typeof jwk.d !== 'string' || typeof jwk.n !== 'string') throw new Error('not a private RSA JWK: ' + JSON.stringify(jwk))
}
console.log('made ${KEYS} keys')
`

test('making signing keys while garbage collections run often never hangs the process', () => {
  const child = spawnSync(process.execPath, ['--gc-global', '--import', 'tsx', '--input-type=module', '-e', CHILD], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 90_000,
  })
  assert.equal(child.signal, null, `the child was stopped after 90 s: it hung (${child.stdout}${child.stderr.slice(-1000)})`)
  assert.equal(child.status, 0, child.stderr.slice(-2000))
  assert.match(child.stdout, new RegExp(`made ${KEYS} keys`))
})
