/**
 * Signed upload URLs: `{base_url}/v1/uploads/{uploadId}/content?expires={unix seconds}&signature=...`,
 * where the signature is HMAC-SHA256 over the upload id and the expiry under a key every instance
 * shares (stored in the database). The URL itself is the credential for one PUT, so a client can
 * hand it to any HTTP tool without a bearer token.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

const EXPIRES_SHAPE = /^\d{1,12}$/
const SIGNATURE_SHAPE = /^[A-Za-z0-9_-]{43}$/

export function uploadSignature(key: Buffer, uploadId: string, expires: string): string {
  return createHmac('sha256', key).update(`${uploadId}\n${expires}`).digest('base64url')
}

export function signedUploadUrl(baseUrl: string, key: Buffer, uploadId: string, expiresAtMs: number): string {
  const expires = String(Math.floor(expiresAtMs / 1000))
  const query = new URLSearchParams({ expires, signature: uploadSignature(key, uploadId, expires) })
  return `${baseUrl}/v1/uploads/${encodeURIComponent(uploadId)}/content?${query}`
}

export type UrlCheck = { ok: true; expiresAtMs: number } | { ok: false; reason: 'invalid' | 'expired' }

/** Checks a URL's signature (in constant time) and then its expiry. */
export function checkUploadUrl(key: Buffer, uploadId: string, expires: string | undefined, signature: string | undefined, nowMs: number): UrlCheck {
  if (expires === undefined || signature === undefined || !EXPIRES_SHAPE.test(expires) || !SIGNATURE_SHAPE.test(signature)) {
    return { ok: false, reason: 'invalid' }
  }
  const expected = Buffer.from(uploadSignature(key, uploadId, expires), 'base64url')
  if (!timingSafeEqual(Buffer.from(signature, 'base64url'), expected)) return { ok: false, reason: 'invalid' }
  const expiresAtMs = Number(expires) * 1000
  return expiresAtMs > nowMs ? { ok: true, expiresAtMs } : { ok: false, reason: 'expired' }
}
