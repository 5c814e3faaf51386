import type { Kysely } from 'kysely'
import type { Database, OAuthConnectionRow } from '../db/types.ts'

/** The apps people connected, and the removal of everything a grant holds. */
export class OAuthRepository {
  constructor(private readonly db: Kysely<Database>) {}

  findConnection(userId: string, clientId: string): Promise<OAuthConnectionRow | undefined> {
    return this.db.selectFrom('oauth_connections').selectAll().where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst()
  }

  /** The apps a person has connected whose grant is still live (a refresh token reused, or a grant run out, ends one). */
  listConnections(userId: string): Promise<OAuthConnectionRow[]> {
    const now = new Date().toISOString()
    return this.db
      .selectFrom('oauth_connections')
      .selectAll()
      .where('user_id', '=', userId)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('oauth_models')
            .select('id')
            .where('model', '=', 'Grant')
            .whereRef('oauth_models.id', '=', 'oauth_connections.grant_id')
            .where((inner) => inner.or([inner('expires_at', 'is', null), inner('expires_at', '>', now)])),
        ),
      )
      .orderBy('first_used_at', 'desc')
      .execute()
  }

  /** Records a connection; its client's registration is kept from now on (unused ones expire). */
  async saveConnection(row: OAuthConnectionRow): Promise<void> {
    await this.db.updateTable('oauth_models').set({ expires_at: null }).where('model', '=', 'Client').where('id', '=', row.client_id).execute()
    await this.db
      .insertInto('oauth_connections')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['user_id', 'client_id']).doUpdateSet({
          grant_id: row.grant_id,
          client_name: row.client_name,
          redirect_host: row.redirect_host,
          last_used_at: row.last_used_at,
          capabilities: row.capabilities,
          sites: row.sites,
        }),
      )
      .execute()
  }

  findConnectionByGrant(grantId: string): Promise<OAuthConnectionRow | undefined> {
    return this.db.selectFrom('oauth_connections').selectAll().where('grant_id', '=', grantId).executeTakeFirst()
  }

  async touchConnection(grantId: string, at: string): Promise<void> {
    await this.db.updateTable('oauth_connections').set({ last_used_at: at }).where('grant_id', '=', grantId).execute()
  }

  /** Removes a grant and every code and token it held (not the sign-in interaction under way, which may name it). */
  async removeGrant(grantId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('oauth_models')
        .where('grant_id', '=', grantId)
        .where('model', 'in', ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'DeviceCode'])
        .execute()
      await trx.deleteFrom('oauth_models').where('model', '=', 'Grant').where('id', '=', grantId).execute()
    })
  }

  /** Removes connections (one client's, or all of a user's) and every grant, code and token they held; how many. */
  async removeConnections(userId: string, clientId?: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let query = trx.selectFrom('oauth_connections').select('grant_id').where('user_id', '=', userId)
      if (clientId !== undefined) query = query.where('client_id', '=', clientId)
      const grants = (await query.execute()).map((r) => r.grant_id)
      if (grants.length === 0) return 0
      await trx.deleteFrom('oauth_models').where('grant_id', 'in', grants).execute()
      await trx.deleteFrom('oauth_models').where('model', '=', 'Grant').where('id', 'in', grants).execute()
      await trx.deleteFrom('oauth_connections').where('user_id', '=', userId).where('grant_id', 'in', grants).execute()
      return grants.length
    })
  }
}
