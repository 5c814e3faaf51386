/**
 * Webhook signing secrets: made in the Standard Webhooks form (`whsec_` and base64 of 32 random
 * bytes; the bytes are the HMAC key), shown once, and stored encrypted with a server key
 * (AES-256-GCM, the key in db/server-secrets.ts), since signing needs them back.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const PREFIX = 'whsec_'
const SEALED_VERSION = 'v1'

export const newSigningSecret = (): string => `${PREFIX}${randomBytes(32).toString('base64')}`

/** The HMAC key of a secret: the bytes its base64 part encodes. */
export const signingKeyOf = (secret: string): Buffer => Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64')

/** Encrypts and decrypts stored secrets under one 32-byte key. */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a secret box takes a 32-byte key')
  }

  /** `v1.` and base64 of the 12-byte nonce, the 16-byte tag and the ciphertext. */
  seal(text: string): string {
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce)
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
    return `${SEALED_VERSION}.${Buffer.concat([nonce, cipher.getAuthTag(), sealed]).toString('base64')}`
  }

  open(stored: string): string {
    const [version, payload] = stored.split('.', 2)
    if (version !== SEALED_VERSION || payload === undefined) throw new Error('not a sealed webhook secret')
    const bytes = Buffer.from(payload, 'base64')
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12))
    decipher.setAuthTag(bytes.subarray(12, 28))
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')
  }
}
