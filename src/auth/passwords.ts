import { randomBytes, type ScryptOptions, scrypt } from 'node:crypto'

const PARAMS = { N: 16384, r: 8, p: 1, keylen: 64 }

function derive(password: string, salt: Buffer, params: typeof PARAMS): Promise<Buffer> {
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 64 * 1024 * 1024 }
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, params.keylen, options, (err, key) => (err ? reject(err) : resolve(key))))
}

/** `scrypt$N$r$p$salt$hash` (base64url), so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, PARAMS)
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}
