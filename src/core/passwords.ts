import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto'

/** scrypt's memory-hard cost: 16 MiB a hash (128 * N * r bytes), on the libuv thread pool (never the event loop). */
const PARAMS = { N: 16384, r: 8, p: 1, keylen: 64 }
/** Parameters a stored hash may name; anything costlier is refused rather than computed. */
const MAX_N = 1 << 20

function derive(password: string, salt: Buffer, params: typeof PARAMS): Promise<Buffer> {
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * 1024 * 1024 }
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, params.keylen, options, (err, key) => (err ? reject(err) : resolve(key))))
}

/** `scrypt$N$r$p$salt$hash` (base64url), so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, PARAMS)
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** Whether the password matches a hash made by hashPassword; false for a malformed hash. Constant-time compare. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  const params = { N: Number(n), r: Number(r), p: Number(p), keylen: 0 }
  if (
    scheme !== 'scrypt' ||
    !salt ||
    !hash ||
    !(params.N > 1 && params.N <= MAX_N) ||
    !(params.r >= 1 && params.r <= 32) ||
    !(params.p >= 1 && params.p <= 16)
  ) {
    return false
  }
  const expected = Buffer.from(hash, 'base64url')
  params.keylen = expected.length
  if (expected.length < 16) return false
  const actual = await derive(password, Buffer.from(salt, 'base64url'), params)
  return timingSafeEqual(actual, expected)
}

let decoy: Promise<string> | undefined

/** A hash of no one's password: checking a sign-in to an unknown account costs what a known one does. */
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('base64url'))
  return decoy
}
