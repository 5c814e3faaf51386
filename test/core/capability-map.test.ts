/**
 * The one table of what each operation needs of a token (core/capability-map.ts): it names every
 * REST operation of /v1 and every MCP tool, and nothing that does not exist; a route the table
 * does not name stops the app from building, so a new route or tool must declare its capability.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import Fastify from 'fastify'
import { requireCapabilities } from '../../src/auth/auth.routes.ts'
import { NEEDS } from '../../src/core/capabilities.ts'
import { REST_CAPABILITIES, TOOL_CAPABILITIES } from '../../src/core/capability-map.ts'
import { connect, type McpClient } from '../helpers/mcp.ts'
import { createUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

describe('the capability map', () => {
  let server: TestServer
  let client: McpClient

  before(async () => {
    server = await startTestServer('sqlite')
    const user = await createUser(server)
    client = await connect(server, user.token, { toolsets: 'all' })
  })
  after(async () => {
    await client.close()
    await server.close()
  })

  test('names every /v1 operation of the OpenAPI document, and no other', async () => {
    const document = (await server.api('GET', '/openapi.json')).body
    const operations = Object.entries<any>(document.paths)
      .filter(([path]) => path.startsWith('/v1'))
      .flatMap(([, methods]) => Object.values<any>(methods).map((operation) => operation.operationId as string))
    assert.deepEqual([...operations].sort(), Object.keys(REST_CAPABILITIES).sort())
  })

  test('names every MCP tool, and no other', async () => {
    const { tools } = await client.listTools()
    assert.deepEqual(tools.map((tool) => tool.name).sort(), Object.keys(TOOL_CAPABILITIES).sort())
  })

  test('gives only known needs', () => {
    for (const need of [...Object.values(REST_CAPABILITIES), ...Object.values(TOOL_CAPABILITIES)]) assert.ok(NEEDS.includes(need), need)
  })

  test('a route the table does not name stops the app from building', async () => {
    const app = Fastify()
    await app.register((scope, _options, done) => {
      requireCapabilities(scope)
      scope.get('/known', { schema: { operationId: 'getWebsite' } }, () => ({}))
      done()
    })
    await app.ready()
    await app.close()

    const broken = Fastify()
    await assert.rejects(async () => {
      await broken.register((scope, _options, done) => {
        requireCapabilities(scope)
        try {
          scope.post('/promotion-request', { schema: { operationId: 'createPromotionRequest' } }, () => ({}))
          done()
        } catch (error) {
          done(error as Error)
        }
      })
    }, /createPromotionRequest.*declares no capability in core\/capability-map\.ts/)
    await broken.close()
  })
})
