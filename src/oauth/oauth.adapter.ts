/**
 * oidc-provider's storage adapter on Plinth's own database (SQLite or PostgreSQL): one table for
 * every model (clients, grants, codes, tokens, interactions, sessions), so that every instance
 * on one database shares the authorization server's state and nothing lives in memory.
 */
import type { Kysely } from 'kysely'
import type { Adapter, AdapterPayload } from 'oidc-provider'
import { OAUTH_UNUSED_CLIENT_TTL_SECONDS } from '../core/limits.ts'
import type { Database } from '../db/types.ts'

/**
 * Removes every expired row (the service runs it at start and periodically); how many. A
 * registered client expires OAUTH_UNUSED_CLIENT_TTL_SECONDS after it registered unless someone
 * connected it (oauth.repository.ts keeps it then): registration is open, so unused
 * registrations must not pile up. Expired rows are never read, swept or not.
 */
export async function sweepExpired(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('oauth_models').where('expires_at', '<=', new Date().toISOString()).executeTakeFirst()
  return Number(result.numDeletedRows)
}

export function oauthAdapter(db: Kysely<Database>): new (model: string) => Adapter {
  return class DatabaseAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const lifetime = expiresIn || (this.model === 'Client' ? OAUTH_UNUSED_CLIENT_TTL_SECONDS : 0)
      const row = {
        model: this.model,
        id,
        payload: JSON.stringify(payload),
        grant_id: payload.grantId ?? null,
        user_code: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expires_at: lifetime ? new Date(Date.now() + lifetime * 1000).toISOString() : null,
        consumed_at: null,
      }
      await db
        .insertInto('oauth_models')
        .values(row)
        .onConflict((oc) =>
          oc
            .columns(['model', 'id'])
            .doUpdateSet({ payload: row.payload, grant_id: row.grant_id, user_code: row.user_code, uid: row.uid, expires_at: row.expires_at }),
        )
        .execute()
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return this.findWhere('id', id)
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findWhere('user_code', userCode)
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findWhere('uid', uid)
    }

    async consume(id: string): Promise<void> {
      await db.updateTable('oauth_models').set({ consumed_at: new Date().toISOString() }).where('model', '=', this.model).where('id', '=', id).execute()
    }

    async destroy(id: string): Promise<void> {
      await db.deleteFrom('oauth_models').where('model', '=', this.model).where('id', '=', id).execute()
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.deleteFrom('oauth_models').where('model', '=', this.model).where('grant_id', '=', grantId).execute()
    }

    private async findWhere(column: 'id' | 'user_code' | 'uid', value: string): Promise<AdapterPayload | undefined> {
      const row = await db
        .selectFrom('oauth_models')
        .select(['payload', 'expires_at', 'consumed_at'])
        .where('model', '=', this.model)
        .where(column, '=', value)
        .executeTakeFirst()
      if (!row || (row.expires_at && row.expires_at <= new Date().toISOString())) return undefined
      const payload = JSON.parse(row.payload) as AdapterPayload
      // oidc-provider reads `consumed` as a timestamp in seconds.
      return row.consumed_at ? { ...payload, consumed: Math.floor(Date.parse(row.consumed_at) / 1000) } : payload
    }
  }
}
