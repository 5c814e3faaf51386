/**
 * Server-wide secrets shared by every instance on one database: the upload URL signing key, the
 * key of the web forms' CSRF tokens, the OAuth server's cookie key and token signing key, the key
 * webhook signing secrets are encrypted with. Each
 * is generated on first use with an insert-if-absent, so concurrent first uses on several
 * instances agree on one value; none is ever in the repository or a setting.
 */
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { nowIso } from '../core/ids.ts'
import type { Database } from './types.ts'

export type SecretName = 'upload_url_key' | 'csrf_key' | 'oauth_cookie_key' | 'oauth_signing_jwk' | 'site_unlock_key' | 'webhook_secret_key'

export class ServerSecrets {
  private readonly values = new Map<SecretName, Promise<string>>()

  constructor(private readonly db: Kysely<Database>) {}

  /** The random 32-byte key of this name. */
  async key(name: SecretName): Promise<Buffer> {
    return Buffer.from(await this.value(name, () => randomBytes(32).toString('base64')), 'base64')
  }

  /** The stored text of this name, made by `create` the first time any instance asks; cached per process. */
  value(name: SecretName, create: () => string): Promise<string> {
    let value = this.values.get(name)
    if (!value) {
      value = this.load(name, create).catch((error) => {
        this.values.delete(name)
        throw error
      })
      this.values.set(name, value)
    }
    return value
  }

  private async load(name: SecretName, create: () => string): Promise<string> {
    await this.db
      .insertInto('secrets')
      .values({ name, value: create(), created_at: nowIso() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
    const stored = await this.db.selectFrom('secrets').select('value').where('name', '=', name).executeTakeFirst()
    if (!stored) throw new Error(`the server secret ${name} could not be stored`)
    return stored.value
  }
}
