/**
 * Factories for the things most suites start from: users with tokens, sites, versions, editors,
 * and the small fixtures (a 1x1 PNG, a SHA-256) they publish. Each makes one thing through the
 * real services or API of a test server, with defaults that fit most tests and overrides for the
 * rest, and fails loudly when the server refuses.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { type ApiResponse, bundle, type TestServer } from './server.ts'

/** The hex SHA-256 of some bytes, as the API names blobs. */
export const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex')

/** A valid 1x1 PNG, base64: the smallest image every image check accepts. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
export const PNG = Buffer.from(PNG_BASE64, 'base64')

/** Asserts an error envelope: its status, its code, a message (matching `message` when given). */
export function assertError(res: ApiResponse, status: number, code: string, message?: RegExp): void {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text}`)
  assert.equal(res.body?.error?.code, code, res.text)
  assert.equal(typeof res.body.error.message, 'string')
  if (message) assert.match(res.body.error.message, message)
}

export type Access = 'rest' | 'mcp' | 'both'

export interface TestUser {
  id: string
  email: string
  /** A token of `access` (both by default). */
  token: string
  tokenId: string
}

/** A user (a fresh email unless given) with a token. */
export function createUser(server: TestServer, overrides: { email?: string; access?: Access } = {}): Promise<TestUser> {
  return server.user(overrides.email, overrides.access)
}

/** Another token of `user`. */
export async function createToken(
  server: TestServer,
  user: Pick<TestUser, 'id'>,
  overrides: { name?: string; access?: Access; expiresAt?: string | null; capabilities?: string[]; sites?: string[] } = {},
): Promise<{ token: string; tokenId: string }> {
  const { token, row } = await server.server.services.tokens.create(user.id, { access: 'both', ...overrides })
  return { token, tokenId: row.id }
}

export interface TestSite {
  websiteId: string
  slug: string
  version: number
  jobId: string
}

/** A site published by `owner` (a new user unless given): bundle() in category `other` unless told otherwise; the API names it when no name is given. */
export async function createSite(
  server: TestServer,
  overrides: { owner?: Pick<TestUser, 'token'>; name?: string; slug?: string; category?: string; files?: unknown[] } = {},
): Promise<TestSite & { owner: Pick<TestUser, 'token'> }> {
  const { owner = await createUser(server), ...given } = overrides
  const body = { category: 'other', files: bundle(), ...given }
  const created = await server.api('POST', '/v1/websites', { token: owner.token, body })
  assert.equal(created.status, 201, created.text)
  const { websiteId, slug, version, jobId } = created.body
  return { websiteId, slug, version, jobId, owner }
}

/** A new version of a site, with bundle() unless other files are given (promoted, with no message, unless told otherwise). */
export async function createVersion(
  server: TestServer,
  owner: Pick<TestUser, 'token'>,
  websiteId: string,
  overrides: { files?: unknown[]; promote?: boolean; message?: string } = {},
): Promise<{ version: number; jobId: string }> {
  const body = { ...overrides, files: overrides.files ?? bundle('Next') }
  const res = await server.api('POST', `/v1/websites/${websiteId}/versions`, { token: owner.token, body })
  assert.equal(res.status, 201, res.text)
  return { version: res.body.version, jobId: res.body.jobId }
}

/** Makes `user` (a new user unless given) an editor of the site. */
export async function addEditor(server: TestServer, websiteId: string, user?: TestUser): Promise<TestUser> {
  const editor = user ?? (await createUser(server))
  await server.server.services.members.share(websiteId, editor.email, 'editor')
  return editor
}

/** A site with its three kinds of caller: its owner, an editor of it, and a stranger to it. */
export async function siteWithMembers(server: TestServer, overrides: Parameters<typeof createSite>[1] = {}) {
  const owner = await createUser(server)
  const site = await createSite(server, { ...overrides, owner })
  const editor = await addEditor(server, site.websiteId)
  const stranger = await createUser(server)
  return { site, owner, editor, stranger }
}

/** A site live at bundle('One') with a version for review, bundle('Two'), not promoted: what promotion requests and schedules start from. */
export async function siteWithPreview(server: TestServer, owner?: TestUser) {
  const user = owner ?? (await createUser(server))
  const site = await createSite(server, { owner: user, files: bundle('One') })
  const preview = await createVersion(server, user, site.websiteId, { files: bundle('Two'), promote: false })
  return { owner: user, site, preview }
}
