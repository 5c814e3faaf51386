/**
 * Subresource Integrity (https://www.w3.org/TR/SRI/): whether fetched bytes match an element's
 * `integrity` attribute, decided as a browser decides it. Only the strongest algorithm the
 * attribute names counts (sha512 over sha384 over sha256), and any one of its hashes matching is
 * enough; options after `?` are ignored, and tokens that are not `alg-base64` are skipped.
 */
import { createHash } from 'node:crypto'

const STRENGTH: Record<string, number> = { sha256: 1, sha384: 2, sha512: 3 }

/** True or false when the attribute names hashes; null when it names none a browser would check (no check then). */
export function integrityMatches(bytes: Buffer, attribute: string): boolean | null {
  const hashes = attribute
    .trim()
    .split(/\s+/)
    .flatMap((token) => {
      const match = /^(sha256|sha384|sha512)-([A-Za-z0-9+/_-]+={0,2})(\?.*)?$/.exec(token)
      return match ? [{ algorithm: match[1]!, digest: match[2]!.replace(/-/g, '+').replace(/_/g, '/') }] : []
    })
  if (hashes.length === 0) return null
  const strongest = Math.max(...hashes.map((h) => STRENGTH[h.algorithm]!))
  return hashes.filter((h) => STRENGTH[h.algorithm] === strongest).some((h) => createHash(h.algorithm).update(bytes).digest('base64') === h.digest)
}
