/**
 * Server-wide secrets shared by every instance on one database (the upload URL signing key, the
 * key of the web forms' CSRF tokens). Each is generated on first use with an insert-if-absent, so concurrent
 * first uses on several instances agree on one value; none is ever in the repository or a setting.
 */
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { nowIso } from '../core/ids.ts'
import type { Database } from './types.ts'

export type SecretName = 'upload_url_key' | 'csrf_key'

export class ServerSecrets {
  private readonly keys = new Map<SecretName, Promise<Buffer>>()

  constructor(private readonly db: Kysely<Database>) {}

  /** The 32-byte key of this name, created once per installation and cached per process. */
  key(name: SecretName): Promise<Buffer> {
    let key = this.keys.get(name)
    if (!key) {
      key = this.load(name).catch((error) => {
        this.keys.delete(name)
        throw error
      })
      this.keys.set(name, key)
    }
    return key
  }

  private async load(name: SecretName): Promise<Buffer> {
    await this.db
      .insertInto('secrets')
      .values({ name, value: randomBytes(32).toString('base64'), created_at: nowIso() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
    const stored = await this.db.selectFrom('secrets').select('value').where('name', '=', name).executeTakeFirst()
    if (!stored) throw new Error(`the server secret ${name} could not be stored`)
    return Buffer.from(stored.value, 'base64')
  }
}
