/**
 * Promotion requests over MCP (the `approvals` toolset), with the SDK's v2 and 1.x clients on every store: an agent asks
 * with request_promotion, reads the outcome with get_promotion_request, approved or declined,
 * withdraws with withdraw_promotion_request, schedules one with schedule_promotion, lists and
 * cancels schedules, and gets the same errors as REST.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Principal } from '../../src/core/principal.ts'
import { createSite, createToken, createUser, createVersion, siteWithPreview, type TestUser } from '../helpers/factories.ts'
import { CLIENTS, call, connect, type McpClient } from '../helpers/mcp.ts'
import { bundle, sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const sharedServer = sharedTestServers()

for (const store of STORES) {
  for (const kind of CLIENTS) {
    describe(`promotion requests over MCP (${store.name}, ${kind} client)`, { skip: store.skip }, () => {
      let server: TestServer
      let owner: TestUser
      let client: McpClient
      const person = (user: TestUser): Principal => ({
        userId: user.id,
        email: user.email,
        name: null,
        tokenId: 'web-session',
        access: 'both',
        capabilities: null,
        sites: null,
      })

      before(async () => {
        server = await sharedServer(store.name)
        owner = await createUser(server)
        client = await connect(server, owner.token, { client: kind, toolsets: 'default,approvals' })
      })
      after(() => client?.close())

      it('asks, and reads approved once a person approves; the version is live', async () => {
        const { site, preview } = await siteWithPreview(server, owner)
        const asked = await call(client, 'request_promotion', { websiteId: site.websiteId, versionId: preview.jobId, note: 'Spring menu' })
        assert.equal(asked.isError, false, JSON.stringify(asked.data))
        assert.match(asked.data.requestId, /^prq_/)
        assert.equal(asked.data.status, 'pending')
        assert.equal(asked.data.note, 'Spring menu')
        const again = await call(client, 'request_promotion', { websiteId: site.websiteId, versionId: preview.jobId })
        assert.equal(again.data.requestId, asked.data.requestId, 'the pending request is answered again')
        const pending = await call(client, 'get_promotion_request', { websiteId: site.websiteId, requestId: asked.data.requestId })
        assert.equal(pending.data.status, 'pending')

        await server.server.services.promotionRequests.approve(person(owner), site.websiteId, asked.data.requestId)
        const outcome = await call(client, 'get_promotion_request', { websiteId: site.websiteId, requestId: asked.data.requestId })
        assert.equal(outcome.data.status, 'approved')
        assert.ok(outcome.data.decidedAt)
        assert.match((await server.site(site.slug)).body.toString(), /<title>Two<\/title>/)
      })

      it('reads declined with the reason; the live version stays', async () => {
        const { site, preview } = await siteWithPreview(server, owner)
        const asked = await call(client, 'request_promotion', { websiteId: site.websiteId, versionId: String(preview.version) })
        assert.equal(asked.data.note, null)
        await server.server.services.promotionRequests.decline(person(owner), site.websiteId, asked.data.requestId, 'Wrong prices')
        const outcome = await call(client, 'get_promotion_request', { websiteId: site.websiteId, requestId: asked.data.requestId })
        assert.equal(outcome.data.status, 'declined')
        assert.equal(outcome.data.reason, 'Wrong prices')
        assert.match((await server.site(site.slug)).body.toString(), /<title>One<\/title>/)
      })

      it('withdraws a pending request: cancelled, and a second withdrawal is NOT_PENDING', async () => {
        const { site, preview } = await siteWithPreview(server, owner)
        const asked = await call(client, 'request_promotion', { websiteId: site.websiteId, versionId: preview.jobId })
        const withdrawn = await call(client, 'withdraw_promotion_request', { websiteId: site.websiteId, requestId: asked.data.requestId })
        assert.equal(withdrawn.isError, false, JSON.stringify(withdrawn.data))
        assert.equal(withdrawn.data.status, 'cancelled')
        assert.ok(withdrawn.data.decidedAt)
        const read = await call(client, 'get_promotion_request', { websiteId: site.websiteId, requestId: asked.data.requestId })
        assert.deepEqual(read.data, withdrawn.data, 'what it answered is what is stored')
        const twice = await call(client, 'withdraw_promotion_request', { websiteId: site.websiteId, requestId: asked.data.requestId })
        assert.equal(twice.isError, true)
        assert.equal(twice.data.error.code, 'NOT_PENDING')
        assert.match((await server.site(site.slug)).body.toString(), /<title>One<\/title>/)
      })

      it('a token that may preview but not promote finds the tools to ask without choosing a toolset', async () => {
        const site = await createSite(server, { owner, files: bundle('One') })
        const asking = await connect(server, (await createToken(server, owner, { capabilities: ['read', 'preview'] })).token, { client: kind })
        const unscoped = await connect(server, owner.token, { client: kind })
        try {
          const names = (await asking.listTools()).tools.map((tool) => tool.name)
          for (const tool of ['request_promotion', 'get_promotion_request', 'withdraw_promotion_request']) assert.ok(names.includes(tool), names.join(', '))
          assert.ok(!names.includes('promote_version'))
          const preview = await createVersion(server, owner, site.websiteId, { files: bundle('Two'), promote: false })
          const asked = await call(asking, 'request_promotion', { websiteId: site.websiteId, versionId: String(preview.version) })
          assert.equal(asked.data.status, 'pending')
          const own = (await unscoped.listTools()).tools.map((tool) => tool.name)
          assert.ok(!own.includes('request_promotion'), 'a token that promotes keeps the default toolsets')
        } finally {
          await asking.close()
          await unscoped.close()
        }
      })

      it('schedules a promotion, lists it as REST does, and cancels it; the live version stays', async () => {
        const { site, preview } = await siteWithPreview(server, owner)
        const promoteAt = new Date(Date.now() + 3_600_000).toISOString()
        const scheduled = await call(client, 'schedule_promotion', { websiteId: site.websiteId, versionId: String(preview.version), promoteAt })
        assert.equal(scheduled.isError, false, JSON.stringify(scheduled.data))
        assert.match(scheduled.data.scheduleId, /^sch_/)
        assert.equal(scheduled.data.versionId, preview.jobId)
        assert.equal(scheduled.data.version, preview.version)
        assert.equal(scheduled.data.promoteAt, promoteAt)
        assert.equal(scheduled.data.status, 'pending')

        const listed = await call(client, 'list_schedules', { websiteId: site.websiteId })
        const overRest = await server.api('GET', `/v1/websites/${site.websiteId}/schedules`, { token: owner.token })
        assert.deepEqual(listed.data, overRest.body, 'the same list as listSchedules')
        assert.deepEqual(listed.data.items, [scheduled.data])

        const cancelled = await call(client, 'cancel_schedule', { websiteId: site.websiteId, scheduleId: scheduled.data.scheduleId })
        assert.equal(cancelled.isError, false, JSON.stringify(cancelled.data))
        assert.equal(cancelled.data.status, 'cancelled')
        assert.ok(cancelled.data.finishedAt)
        assert.deepEqual(
          (await call(client, 'list_schedules', { websiteId: site.websiteId })).data.items,
          [cancelled.data],
          'what it answered is what is stored',
        )
        const twice = await call(client, 'cancel_schedule', { websiteId: site.websiteId, scheduleId: scheduled.data.scheduleId })
        assert.equal(twice.isError, true)
        assert.equal(twice.data.error.code, 'NOT_PENDING')
        assert.match((await server.site(site.slug)).body.toString(), /<title>One<\/title>/)
      })

      it('a bad promoteAt is BAD_REQUEST naming it, and a token that may not promote cannot schedule', async () => {
        const { site, preview } = await siteWithPreview(server, owner)
        for (const promoteAt of [new Date(Date.now() - 60_000).toISOString(), 'next monday', '2026-12-01T09:00:00']) {
          const refused = await call(client, 'schedule_promotion', { websiteId: site.websiteId, versionId: preview.jobId, promoteAt })
          assert.equal(refused.isError, true, promoteAt)
          assert.equal(refused.data.error.code, 'BAD_REQUEST', promoteAt)
          assert.ok(refused.data.error.fields.promoteAt, promoteAt)
        }
        const asking = await connect(server, (await createToken(server, owner, { capabilities: ['read', 'preview'] })).token, {
          client: kind,
          toolsets: 'approvals',
        })
        try {
          const promoteAt = new Date(Date.now() + 3_600_000).toISOString()
          const refused = await call(asking, 'schedule_promotion', { websiteId: site.websiteId, versionId: preview.jobId, promoteAt })
          assert.equal(refused.data.error.code, 'TOKEN_NOT_ALLOWED')
          assert.deepEqual((await call(asking, 'list_schedules', { websiteId: site.websiteId })).data.items, [], 'nothing was scheduled; read may list')
          const unknown = await call(client, 'cancel_schedule', { websiteId: site.websiteId, scheduleId: 'sch_none' })
          assert.equal(unknown.data.error.code, 'NOT_FOUND')
        } finally {
          await asking.close()
        }
      })

      it('answers the live version with ALREADY_LIVE and a stranger with NOT_FOUND', async () => {
        const site = await createSite(server, { owner })
        const live = await call(client, 'request_promotion', { websiteId: site.websiteId, versionId: site.jobId })
        assert.equal(live.isError, true)
        assert.equal(live.data.error.code, 'ALREADY_LIVE')
        const stranger = await connect(server, (await createUser(server)).token, { client: kind, toolsets: 'approvals' })
        try {
          const hidden = await call(stranger, 'request_promotion', { websiteId: site.websiteId, versionId: site.jobId })
          assert.equal(hidden.data.error.code, 'NOT_FOUND')
          const unknown = await call(client, 'get_promotion_request', { websiteId: site.websiteId, requestId: 'prq_none' })
          assert.equal(unknown.data.error.code, 'NOT_FOUND')
        } finally {
          await stranger.close()
        }
      })
    })
  }
}
