import assert from 'node:assert/strict'
import { test } from 'node:test'
import Fastify from 'fastify'
import { Type } from 'typebox'
import { strictQueries } from '../../src/http/strict-queries.ts'

test('an API route whose query schema takes parameters it does not name makes the app fail to build', async () => {
  // Plinth's validator refuses fields a schema does not name, rather than dropping them (app.ts).
  const app = Fastify({ ajv: { customOptions: { removeAdditional: false } } })
  // The error envelope the documented 422 points at.
  app.addSchema({ $id: 'Error', type: 'object' })
  strictQueries(app, '/v1')
  const lenient = Type.Object({ limit: Type.Optional(Type.String()) })
  assert.throws(() => app.get('/v1/things', { schema: { querystring: lenient } }, () => ({})), /GET \/v1\/things: its query schema must refuse/)
  // Outside the prefix, and hidden routes, are left as they are.
  app.get('/pages', { schema: { querystring: lenient } }, () => ({}))
  app.get('/v1/hidden', { schema: { hide: true } }, () => ({ ok: true }))
  app.get('/v1/strict', { schema: { querystring: Type.Object({ limit: Type.Optional(Type.String()) }, { additionalProperties: false }) } }, () => ({
    ok: true,
  }))
  app.get('/v1/none', () => ({ ok: true }))
  const status = async (url: string) => (await app.inject({ method: 'GET', url })).statusCode
  assert.equal(await status('/pages?other=1'), 200)
  assert.equal(await status('/v1/hidden?other=1'), 200)
  assert.equal(await status('/v1/strict?limit=1'), 200)
  assert.equal(await status('/v1/strict?other=1'), 400, 'the bare app answers schema failures with 400; Plinth makes them 422')
  assert.equal(await status('/v1/none'), 200)
  assert.equal(await status('/v1/none?other=1'), 400)
  await app.close()
})
