/**
 * The editors of a website and its history, as the dashboard asks the websites service for them:
 * members, addEditor and removeEditor (owner only), history with who published each version.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Principal } from '../../src/auth/tokens.service.ts'
import { AppError } from '../../src/core/errors.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

type User = Awaited<ReturnType<TestServer['user']>>

const principal = (user: User): Principal => ({ userId: user.id, email: user.email, name: null, tokenId: user.tokenId, access: 'both' })

/** Asserts that `work` fails with the AppError of `code` (and fields, when given). */
async function rejectsWith(work: Promise<unknown>, code: string, fields?: string[]): Promise<AppError> {
  let caught: unknown
  await assert.rejects(work, (error) => {
    caught = error
    return true
  })
  assert.ok(caught instanceof AppError, `an AppError, got ${String(caught)}`)
  assert.equal(caught.code, code, caught.message)
  if (fields) assert.deepEqual(Object.keys(caught.fields ?? {}).sort(), fields)
  return caught
}

for (const store of STORES) {
  describe(`website members and history (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: User
    let websiteId: string
    before(async () => {
      server = await startTestServer(store.name)
      owner = await server.user()
      const created = await server.api('POST', '/v1/websites', {
        token: owner.token,
        body: { name: 'Shared bakery', category: 'restaurant', files: bundle('One') },
      })
      assert.equal(created.status, 201, created.text)
      websiteId = created.body.websiteId
    })
    after(() => server?.close())

    const websites = () => server.server.services.websites

    test('the owner adds editors by email; owner and editors see the members, owner first', async () => {
      const ann = await server.user(`ann-${Date.now()}@example.com`)
      const ben = await server.user(`ben-${Date.now()}@example.com`)
      assert.deepEqual(await websites().members(principal(owner), websiteId), [
        {
          userId: owner.id,
          email: owner.email,
          name: owner.email.split('@')[0],
          role: 'owner',
          addedAt: (await websites().get(principal(owner), websiteId)).createdAt,
        },
      ])

      // The email is matched as accounts store it: trimmed, lowercase.
      await websites().addEditor(principal(owner), websiteId, `  ${ann.email.toUpperCase()} `)
      await websites().addEditor(principal(owner), websiteId, ben.email)
      const members = await websites().members(principal(owner), websiteId)
      assert.deepEqual(
        members.map((m) => [m.role, m.userId, m.email, m.name]),
        [
          ['owner', owner.id, owner.email, owner.email.split('@')[0]],
          ['editor', ann.id, ann.email, ann.email.split('@')[0]],
          ['editor', ben.id, ben.email, ben.email.split('@')[0]],
        ],
      )
      for (const member of members) assert.match(member.addedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
      assert.ok(members[1]!.addedAt <= members[2]!.addedAt)
      assert.deepEqual(await websites().members(principal(ann), websiteId), members, 'an editor sees the same list')

      // The new editor reaches the site over the API.
      const got = await server.api('GET', `/v1/websites/${websiteId}`, { token: ann.token })
      assert.equal(got.status, 200)
      assert.equal(got.body.role, 'editor')

      // Adding an editor again changes nothing.
      await websites().addEditor(principal(owner), websiteId, ann.email)
      assert.deepEqual(await websites().members(principal(owner), websiteId), members)

      const stranger = await server.user()
      await rejectsWith(websites().members(principal(stranger), websiteId), 'NOT_FOUND')
      await rejectsWith(websites().members(principal(owner), 'web_unknown'), 'NOT_FOUND')
    })

    test('only the owner adds and removes editors: OWNER_ONLY for an editor, NOT_FOUND for anyone else', async () => {
      const editor = await server.user()
      const other = await server.user()
      await websites().addEditor(principal(owner), websiteId, editor.email)
      const before = await websites().members(principal(owner), websiteId)

      const refused = await rejectsWith(websites().addEditor(principal(editor), websiteId, other.email), 'OWNER_ONLY')
      assert.equal(refused.status, 403)
      assert.match(refused.message, /owner/)
      await rejectsWith(websites().removeEditor(principal(editor), websiteId, editor.id), 'OWNER_ONLY')
      await rejectsWith(websites().addEditor(principal(other), websiteId, other.email), 'NOT_FOUND')
      await rejectsWith(websites().removeEditor(principal(other), websiteId, editor.id), 'NOT_FOUND')
      assert.deepEqual(await websites().members(principal(owner), websiteId), before, 'nothing changed')
    })

    test('an unknown email is NOT_FOUND naming it; the owner cannot be added; an empty email is VALIDATION_FAILED', async () => {
      const unknown = await rejectsWith(websites().addEditor(principal(owner), websiteId, 'Nobody@Example.com'), 'NOT_FOUND')
      assert.match(unknown.message, /No user with the email "nobody@example\.com"/)
      const self = await rejectsWith(websites().addEditor(principal(owner), websiteId, owner.email), 'VALIDATION_FAILED', ['email'])
      assert.match(self.fields!.email!, /already owns/)
      await rejectsWith(websites().addEditor(principal(owner), websiteId, '  '), 'VALIDATION_FAILED', ['email'])
      const members = await websites().members(principal(owner), websiteId)
      assert.equal(members.filter((m) => m.role === 'owner').length, 1)
      assert.equal(members.filter((m) => m.userId === owner.id).length, 1, 'the owner is listed once')
    })

    test('the owner removes an editor, who loses the site; the owner cannot be removed; an unknown member is NOT_FOUND', async () => {
      const leaving = await server.user()
      await websites().addEditor(principal(owner), websiteId, leaving.email)
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: leaving.token })).status, 200)

      await websites().removeEditor(principal(owner), websiteId, leaving.id)
      const members = await websites().members(principal(owner), websiteId)
      assert.equal(
        members.some((m) => m.userId === leaving.id),
        false,
      )
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: leaving.token })).status, 404)
      await rejectsWith(websites().members(principal(leaving), websiteId), 'NOT_FOUND')

      await rejectsWith(websites().removeEditor(principal(owner), websiteId, leaving.id), 'NOT_FOUND')
      await rejectsWith(websites().removeEditor(principal(owner), websiteId, 'usr_unknown'), 'NOT_FOUND')
      await rejectsWith(websites().removeEditor(principal(owner), websiteId, owner.id), 'VALIDATION_FAILED', ['userId'])
      assert.deepEqual(await websites().members(principal(owner), websiteId), members)
    })

    test('history lists every version newest first, as the Version view, with who published each', async () => {
      const author = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: author.token, body: { name: 'History', category: 'other', files: bundle('H1') } })
      const id = created.body.websiteId as string
      const helper = await server.user()
      await websites().addEditor(principal(author), id, helper.email)
      const v2 = await server.api('POST', `/v1/websites/${id}/versions`, {
        token: helper.token,
        body: { files: bundle('H2'), message: 'By the helper', promote: false },
      })
      assert.equal(v2.status, 201, v2.text)

      const history = await websites().history(principal(author), id)
      assert.deepEqual(
        history.map((v) => [v.version, v.publishedBy]),
        [
          [2, { name: helper.email.split('@')[0], email: helper.email }],
          [1, { name: author.email.split('@')[0], email: author.email }],
        ],
      )
      // Each entry is the Version of listWebsiteVersions, plus publishedBy.
      const versions = (await server.api('GET', `/v1/websites/${id}/versions`, { token: author.token })).body.versions
      assert.deepEqual(
        history.map(({ publishedBy: _by, ...version }) => version),
        versions,
      )
      assert.equal(history[0]!.instruction, 'By the helper')
      assert.equal(history[0]!.isCurrent, false)
      assert.equal(history[1]!.isCurrent, true)

      assert.deepEqual(await websites().history(principal(helper), id), history, 'editors see it too')
      await rejectsWith(websites().history(principal(owner), id), 'NOT_FOUND')
    })
  })
}
