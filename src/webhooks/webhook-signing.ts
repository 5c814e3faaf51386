/**
 * The Standard Webhooks signature (https://www.standardwebhooks.com/): `webhook-signature` is
 * `v1,` and the base64 HMAC-SHA256, under the secret's decoded bytes, of `{id}.{timestamp}.{body}`;
 * `webhook-id` stays the same on every attempt, `webhook-timestamp` (Unix seconds) is the attempt's.
 */
import { createHmac } from 'node:crypto'
import { signingKeyOf } from './webhook-secrets.ts'

export function signatureOf(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', signingKeyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}

/** The headers of one attempt. */
export function signedHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signatureOf(secret, id, timestampSeconds, body),
  }
}
