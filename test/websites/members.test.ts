/**
 * The editors of a website and its history, as the dashboard asks the services for them:
 * members, invitations by email (the same answer whether or not the email has an account, taken
 * up at sign-in or sign-up), addEditor and removeEditor (owner only), the administrator's share,
 * history with who published each version.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Principal } from '../../src/core/principal.ts'
import { AppError } from '../../src/core/errors.ts'
import { INVITATIONS_PER_ACCOUNT } from '../../src/core/limits.ts'
import { statusOf } from '../../src/http/error-status.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

type User = Awaited<ReturnType<TestServer['user']>>

const principal = (user: User): Principal => ({
  userId: user.id,
  email: user.email,
  name: null,
  tokenId: user.tokenId,
  access: 'both',
  capabilities: null,
  sites: null,
})

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
    const members = () => server.server.services.members
    /** The owner adds an editor by email, and the person takes it up as signing in does. */
    const addEditor = async (by: User, user: User) => {
      await members().addEditor(principal(by), websiteId, user.email)
      await members().acceptInvitations(user)
    }

    test('the owner adds editors by email; once they sign in, owner and editors see the members, owner first', async () => {
      const ann = await server.user(`ann-${Date.now()}@example.com`)
      const ben = await server.user(`ben-${Date.now()}@example.com`)
      assert.deepEqual(await members().members(principal(owner), websiteId), [
        {
          userId: owner.id,
          email: owner.email,
          name: owner.email.split('@')[0],
          role: 'owner',
          addedAt: (await websites().get(principal(owner), websiteId)).createdAt,
        },
      ])

      // The email is matched as accounts store it: trimmed, lowercase.
      assert.equal(await members().addEditor(principal(owner), websiteId, `  ${ann.email.toUpperCase()} `), ann.email)
      await members().addEditor(principal(owner), websiteId, ben.email)
      assert.deepEqual(
        (await members().pendingInvitations(principal(owner), websiteId)).map((i) => i.email),
        [ann.email, ben.email].sort(),
        'invited until they sign in',
      )
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: ann.token })).status, 404, 'not an editor yet')
      assert.equal(await members().acceptInvitations(ann), 1)
      assert.equal(await members().acceptInvitations(ben), 1)
      assert.deepEqual(await members().pendingInvitations(principal(owner), websiteId), [])
      const list = await members().members(principal(owner), websiteId)
      assert.deepEqual(
        list
          .map((m) => [m.role, m.userId, m.email, m.name])
          .slice(1)
          .sort(),
        [
          ['editor', ann.id, ann.email, ann.email.split('@')[0]],
          ['editor', ben.id, ben.email, ben.email.split('@')[0]],
        ].sort(),
      )
      assert.equal(list[0]!.role, 'owner')
      for (const member of list) assert.match(member.addedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
      assert.deepEqual(await members().members(principal(ann), websiteId), list, 'an editor sees the same list')

      // The new editor reaches the site over the API.
      const got = await server.api('GET', `/v1/websites/${websiteId}`, { token: ann.token })
      assert.equal(got.status, 200)
      assert.equal(got.body.role, 'editor')

      // Adding an editor again changes nothing.
      await members().addEditor(principal(owner), websiteId, ann.email)
      assert.deepEqual(await members().members(principal(owner), websiteId), list)
      assert.deepEqual(await members().pendingInvitations(principal(owner), websiteId), [])

      const stranger = await server.user()
      await rejectsWith(members().members(principal(stranger), websiteId), 'NOT_FOUND')
      await rejectsWith(members().members(principal(owner), 'web_unknown'), 'NOT_FOUND')
    })

    test('only the owner adds and removes editors and sees invitations: OWNER_ONLY for an editor, NOT_FOUND for anyone else', async () => {
      const editor = await server.user()
      const other = await server.user()
      await addEditor(owner, editor)
      const before = await members().members(principal(owner), websiteId)
      const invitations = await members().pendingInvitations(principal(owner), websiteId)

      const refused = await rejectsWith(members().addEditor(principal(editor), websiteId, other.email), 'OWNER_ONLY')
      assert.equal(statusOf(refused), 403)
      assert.match(refused.message, /owner/)
      await rejectsWith(members().removeEditor(principal(editor), websiteId, editor.id), 'OWNER_ONLY')
      await rejectsWith(members().pendingInvitations(principal(editor), websiteId), 'OWNER_ONLY')
      await rejectsWith(members().addEditor(principal(other), websiteId, other.email), 'NOT_FOUND')
      await rejectsWith(members().removeEditor(principal(other), websiteId, editor.id), 'NOT_FOUND')
      await rejectsWith(members().removeInvitation(principal(other), websiteId, other.email), 'NOT_FOUND')
      await members().acceptInvitations(other)
      assert.deepEqual(await members().members(principal(owner), websiteId), before, 'nothing changed')
      assert.deepEqual(await members().pendingInvitations(principal(owner), websiteId), invitations)
    })

    test('an email without an account gets the same answer as one with; the owner cannot be added; a bad email is VALIDATION_FAILED', async () => {
      const known = await server.user()
      const unknownEmail = `nobody-${Date.now()}@example.com`
      assert.equal(await members().addEditor(principal(owner), websiteId, known.email), known.email)
      assert.equal(await members().addEditor(principal(owner), websiteId, unknownEmail.toUpperCase()), unknownEmail)
      const pending = await members().pendingInvitations(principal(owner), websiteId)
      assert.deepEqual(
        pending.filter((i) => [known.email, unknownEmail].includes(i.email)).map((i) => Object.keys(i).sort()),
        [
          ['email', 'invitedAt'],
          ['email', 'invitedAt'],
        ],
        'both are listed alike',
      )
      const before = await members().members(principal(owner), websiteId)
      const self = await rejectsWith(members().addEditor(principal(owner), websiteId, owner.email), 'VALIDATION_FAILED', ['email'])
      assert.match(self.fields!.email!, /already owns/)
      await rejectsWith(members().addEditor(principal(owner), websiteId, '  '), 'VALIDATION_FAILED', ['email'])
      await rejectsWith(members().addEditor(principal(owner), websiteId, 'not an email'), 'VALIDATION_FAILED', ['email'])
      await rejectsWith(members().addEditor(principal(owner), websiteId, `${'a'.repeat(250)}@example.com`), 'VALIDATION_FAILED', ['email'])
      assert.deepEqual(await members().members(principal(owner), websiteId), before)
      assert.equal((await members().pendingInvitations(principal(owner), websiteId)).length, pending.length, 'no invitation was added')

      // The owner withdraws an invitation: signing up with that email then gives nothing.
      await members().removeInvitation(principal(owner), websiteId, unknownEmail)
      await rejectsWith(members().removeInvitation(principal(owner), websiteId, unknownEmail), 'NOT_FOUND')
      const late = await server.user(unknownEmail)
      assert.equal(await members().acceptInvitations(late), 0)
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: late.token })).status, 404)
    })

    test('inviting is rate limited per owner: RATE_LIMITED with Retry-After, and nothing is invited', async () => {
      const busy = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: busy.token, body: { name: 'Busy', category: 'other', files: bundle('B') } })
      const id = created.body.websiteId as string
      for (let i = 0; i < INVITATIONS_PER_ACCOUNT; i++) await members().addEditor(principal(busy), id, `guess-${i}-${Date.now()}@example.com`)
      const refused = await rejectsWith(members().addEditor(principal(busy), id, `one-more-${Date.now()}@example.com`), 'RATE_LIMITED')
      assert.equal(statusOf(refused), 429)
      assert.ok((refused.retryAfterSeconds ?? 0) > 0)
      assert.equal((await members().pendingInvitations(principal(busy), id)).length, INVITATIONS_PER_ACCOUNT)
      // Another owner is not affected.
      assert.ok(await members().addEditor(principal(owner), websiteId, `unaffected-${Date.now()}@example.com`))
    })

    test('the administrator shares with an account at once and invites an email without one', async () => {
      const known = await server.user()
      assert.equal(await members().share(websiteId, known.email, 'editor'), 'editor')
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: known.token })).status, 200)
      const email = `later-${Date.now()}@example.com`
      assert.equal(await members().share(websiteId, email, 'editor'), 'invited')
      assert.ok((await members().pendingInvitations(principal(owner), websiteId)).some((i) => i.email === email))
      await rejectsWith(members().share(websiteId, email, 'owner'), 'VALIDATION_FAILED', ['role'])
      await rejectsWith(members().share('web_unknown', email, 'editor'), 'NOT_FOUND')
    })

    test('the owner removes an editor, who loses the site; the owner cannot be removed; an unknown member is NOT_FOUND', async () => {
      const leaving = await server.user()
      await addEditor(owner, leaving)
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: leaving.token })).status, 200)

      await members().removeEditor(principal(owner), websiteId, leaving.id)
      const list = await members().members(principal(owner), websiteId)
      assert.equal(
        list.some((m) => m.userId === leaving.id),
        false,
      )
      assert.equal((await server.api('GET', `/v1/websites/${websiteId}`, { token: leaving.token })).status, 404)
      await rejectsWith(members().members(principal(leaving), websiteId), 'NOT_FOUND')

      await rejectsWith(members().removeEditor(principal(owner), websiteId, leaving.id), 'NOT_FOUND')
      await rejectsWith(members().removeEditor(principal(owner), websiteId, 'usr_unknown'), 'NOT_FOUND')
      await rejectsWith(members().removeEditor(principal(owner), websiteId, owner.id), 'VALIDATION_FAILED', ['userId'])
      assert.deepEqual(await members().members(principal(owner), websiteId), list)
    })

    test('history lists every version newest first, as the Version view, with who published each', async () => {
      const author = await server.user()
      const created = await server.api('POST', '/v1/websites', { token: author.token, body: { name: 'History', category: 'other', files: bundle('H1') } })
      const id = created.body.websiteId as string
      const helper = await server.user()
      await members().addEditor(principal(author), id, helper.email)
      await members().acceptInvitations(helper)
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
