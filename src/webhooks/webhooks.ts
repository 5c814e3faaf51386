/** The webhooks feature as the composition root builds it: the outbox other features emit to, the owner's service, and this instance's sender. */
import type { Config } from '../config.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { Db } from '../db/connect.ts'
import type { ServerSecrets } from '../db/server-secrets.ts'
import { WebhookOutbox } from './webhook-outbox.ts'
import { SecretBox } from './webhook-secrets.ts'
import { WebhookSender, type WebhookSenderOptions } from './webhook-sender.ts'
import { WebhooksRepository } from './webhooks.repository.ts'
import { WebhooksService } from './webhooks.service.ts'

export interface Webhooks {
  outbox: WebhookOutbox
  service: WebhooksService
  sender: WebhookSender
}

export async function createWebhooks(options: {
  db: Db
  config: Config
  access: WebsiteAccess
  secrets: ServerSecrets
  ca: string | undefined
  log: WebhookSenderOptions['log']
}): Promise<Webhooks> {
  const { db, config, access, secrets, ca, log } = options
  const repo = new WebhooksRepository(db.kysely)
  const box = new SecretBox(await secrets.key('webhook_secret_key'))
  const sender = new WebhookSender({
    repo,
    box,
    settings: config.webhooks,
    allowHosts: config.fetchAllowHosts,
    ca,
    userAgent: `Plinth-Webhooks/1.0 (+${config.siteUrl})`,
    log,
  })
  const service = new WebhooksService({ access, repo, box, allowHosts: config.fetchAllowHosts, nudge: () => sender.nudge() })
  return { outbox: new WebhookOutbox(repo), service, sender }
}
