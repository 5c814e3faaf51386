/** The authorization server's signing key, made once per install (oauth.service.ts keeps it in the database). */
import { generateKeyPairSync } from 'node:crypto'
import type { JWK } from 'oidc-provider'

/** generateKeyPairSync with a JWK encoding, which Node has and @types/node does not declare. */
const generateJwkPair = generateKeyPairSync as unknown as (
  type: 'rsa',
  options: { modulusLength: number; privateKeyEncoding: { format: 'jwk' } },
) => { privateKey: JWK }

/**
 * A new RSA signing key, as a private JWK. The generation encodes the key itself: exporting the
 * generated KeyObject afterwards (`.export({ format: 'jwk' })`) can hang the process for good on
 * Node 20, when a garbage collection during the export finalizes the job that made the key, whose
 * destructor waits for the lock the export holds (test/oauth/signing-key.test.ts).
 */
export function newSigningJwk(modulusLength = 2048): JWK {
  return generateJwkPair('rsa', { modulusLength, privateKeyEncoding: { format: 'jwk' } }).privateKey
}
