/**
 * The MCP server over real HTTP, driven by the SDK's v2 Client at every revision Plinth serves
 * and by the SDK 1.x Client, on every store: the tools, their results and errors (the same as
 * REST, and read as results by both clients), auth and origin checks.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { CLIENTS, call, connect, type McpClient, REVISIONS } from '../helpers/mcp.ts'
import { BASE_URL, bundle, SITE_DOMAIN, sharedTestServers, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const PUBLISHING_TOOLS = [
  'publish_website',
  'publish_version',
  'promote_version',
  'list_websites',
  'get_website',
  'list_versions',
  'get_job_status',
  'suggest_slug',
  'delete_website',
  'diff_versions',
]
const DRAFT_TOOLS = ['start_draft', 'list_files', 'read_file', 'write_file', 'edit_file', 'delete_file', 'move_file', 'publish_draft', 'discard_draft']
const READ_ONLY = ['list_websites', 'get_website', 'list_versions', 'get_job_status', 'suggest_slug', 'diff_versions', 'list_files', 'read_file']
/** Tools that change what visitors see, or remove work nothing else holds (a draft's file, a whole draft). */
const DESTRUCTIVE = ['publish_version', 'promote_version', 'delete_website', 'publish_draft', 'delete_file', 'discard_draft']

/** Whether a schema refers to anything but its own `$defs`, where a result's repeated named schemas are held once. */
const schemaHasRef = (schema: unknown): boolean => /"\$ref":"(?!#\/\$defs\/)/.test(JSON.stringify(schema))

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })
/** What an agent pays to connect without choosing toolsets: the whole tools/list result, as JSON. */
const TOOLS_LIST_BUDGET = 40_000

// The suites of both clients share a server per store, and so do their rate-limited ones.
const sharedServer = sharedTestServers()
for (const store of STORES) {
  for (const kind of CLIENTS) describeServer(store, kind)
}

function describeServer(store: (typeof STORES)[number], kind: (typeof CLIENTS)[number]) {
  describe(`MCP server (${store.name}, ${kind} client)`, { skip: store.skip }, () => {
    let server: TestServer
    let alice: Awaited<ReturnType<TestServer['user']>>
    let bob: Awaited<ReturnType<TestServer['user']>>
    let client: McpClient

    before(async () => {
      server = await sharedServer(store.name)
      alice = await server.user()
      bob = await server.user()
      client = await connect(server, alice.token, { client: kind })
    })
    after(() => client?.close())

    // SDK 1.x speaks 2025-11-25 only; the v2 client is run at every revision.
    for (const revision of kind === 'v2' ? REVISIONS : (['2025-11-25'] as const)) {
      it(`initializes and lists the tools at revision ${revision}`, async () => {
        const c = await connect(server, alice.token, { client: kind, revision })
        try {
          assert.equal(c.getServerVersion()?.name, 'plinth')
          const { tools } = await c.listTools()
          for (const name of PUBLISHING_TOOLS)
            assert.ok(
              tools.some((t) => t.name === name),
              `${name} is listed`,
            )
          const site = await call(c, 'suggest_slug', { value: `Revision ${revision}` })
          assert.equal(site.isError, false)
          assert.equal(site.data.slug, `revision-${revision}`)
        } finally {
          await c.close()
        }
      })
    }

    it('declares for every tool a title, all four hints, and self-contained input and output schemas', async () => {
      const everything = await connect(server, alice.token, { client: kind, toolsets: 'all' })
      const { tools } = await everything.listTools().finally(() => everything.close())
      assert.ok(tools.length > PUBLISHING_TOOLS.length + DRAFT_TOOLS.length, 'every toolset is listed')
      for (const tool of tools) {
        assert.ok(tool.title && tool.description && tool.description.length > 100, `${tool.name} has a title and a description`)
        assert.equal(tool.inputSchema.type, 'object')
        assert.equal(tool.outputSchema?.type, 'object', `${tool.name} has an outputSchema`)
        assert.ok(!schemaHasRef(tool.inputSchema) && !schemaHasRef(tool.outputSchema), `${tool.name} schemas resolve nothing from outside`)
        const hints = tool.annotations ?? {}
        for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
          assert.equal(typeof hints[hint], 'boolean', `${tool.name} sets ${hint}`)
        }
        // Only import_asset reaches the web at large (it fetches the image URL it is given).
        assert.equal(hints.openWorldHint, tool.name === 'import_asset', `${tool.name} openWorldHint`)
        if ([...PUBLISHING_TOOLS, ...DRAFT_TOOLS].includes(tool.name)) {
          assert.equal(hints.readOnlyHint, READ_ONLY.includes(tool.name), `${tool.name} readOnlyHint`)
          assert.equal(hints.destructiveHint, DESTRUCTIVE.includes(tool.name), `${tool.name} destructiveHint`)
        }
      }
      const publish = tools.find((t) => t.name === 'publish_website')!
      // The REST schema, inlined: the bundle file's fields come from PublishFile itself.
      const file = publish.inputSchema.properties.files.items
      assert.deepEqual(Object.keys(file.properties).slice(0, 4), ['path', 'content', 'contentEncoding', 'contentType'])
      assert.equal(file.additionalProperties, false)
    })

    it('publishes a site, refines it with and without promote, promotes, and reads it all back', async () => {
      const created = await call(client, 'publish_website', { name: `Agent Bakery ${kind}`, category: 'restaurant', files: bundle('Bakery v1') })
      assert.equal(created.isError, false)
      const { websiteId, slug, pageUrl, jobId, version } = created.data
      assert.equal(slug, `agent-bakery-${kind}`)
      assert.equal(pageUrl, `http://agent-bakery-${kind}.plinth.test:8080/`)
      assert.equal(version, 1)
      assert.match((await server.site(slug)).body.toString(), /Bakery v1/)

      const draft = await call(client, 'publish_version', { websiteId, files: bundle('Bakery v2'), message: 'New menu', promote: false })
      assert.equal(draft.isError, false)
      assert.equal(draft.data.isCurrent, false)
      assert.equal(draft.data.version, 2)
      assert.equal(draft.data.previewUrl, `http://agent-bakery-${kind}--v2.plinth.test:8080/`)
      assert.match((await server.site(slug)).body.toString(), /Bakery v1/, 'the live site is untouched')
      assert.match((await server.site(`${slug}--v2`)).body.toString(), /Bakery v2/)

      const promoted = await call(client, 'promote_version', { websiteId, versionId: draft.data.jobId })
      assert.equal(promoted.isError, false)
      assert.equal(promoted.data.isCurrent, true)
      assert.match((await server.site(slug)).body.toString(), /Bakery v2/)

      const live = await call(client, 'publish_version', { websiteId, files: bundle('Bakery v3') })
      assert.equal(live.data.isCurrent, true)
      assert.match((await server.site(slug)).body.toString(), /Bakery v3/)

      const list = await call(client, 'list_websites')
      const summary = list.data.items.find((s: any) => s.id === websiteId)
      assert.equal(summary.slug, slug)
      assert.equal(summary.pageUrl, pageUrl)
      assert.equal(list.data.websites, undefined, 'no deprecated alias over MCP')
      assert.equal(list.data.websiteLimits.count >= 1, true)

      const site = await call(client, 'get_website', { websiteId })
      assert.equal(site.data.currentVersionId, live.data.jobId)
      assert.deepEqual(
        site.data.versions.map((v: any) => v.version),
        [3, 2, 1],
      )
      assert.equal(site.data.nextCursor, null)

      const versions = await call(client, 'list_versions', { websiteId })
      assert.deepEqual(
        versions.data.versions.map((v: any) => [v.version, v.isCurrent]),
        [
          [3, true],
          [2, false],
          [1, false],
        ],
      )
      assert.equal(versions.data.versions[1].instruction, 'New menu')
      assert.equal(versions.data.nextCursor, null)

      const job = await call(client, 'get_job_status', { jobId })
      assert.equal(job.data.status, 'ready')
      assert.equal(job.data.pageUrl, pageUrl)

      const rollback = await call(client, 'promote_version', { websiteId, versionId: jobId })
      assert.equal(rollback.data.version, 1)
      assert.match((await server.site(slug)).body.toString(), /Bakery v1/)

      const taken = await call(client, 'suggest_slug', { value: `Agent Bakery ${kind}` })
      assert.deepEqual([taken.data.available, taken.data.suggestion], [false, `agent-bakery-${kind}-2`])
    })

    it('returns PUBLISH_INVALID with every violation, exactly as REST does, and stores nothing', async () => {
      const files = [
        { path: 'about.html', content: '<script src="https://cdn.example.com/x.js"></script><iframe src="/a"></iframe>' },
        { path: 'app.js', content: "navigator.serviceWorker.register('/sw.js')" },
        { path: '../escape.css', content: 'body{}' },
      ]
      const before = (await call(client, 'list_websites')).data.items.length
      const result = await call(client, 'publish_website', { category: 'other', files })
      assert.equal(result.isError, true)
      assert.equal(result.data.error.code, 'PUBLISH_INVALID')
      const codes = new Set(result.data.error.violations.map((v: any) => v.code))
      for (const code of ['MISSING_INDEX', 'EXTERNAL_URL', 'IFRAME', 'SERVICE_WORKER', 'INVALID_PATH']) assert.ok(codes.has(code), `${code} reported`)

      const rest = await server.api('POST', '/v1/websites', { token: alice.token, body: { category: 'other', files } })
      assert.equal(rest.status, 422)
      assert.deepEqual(result.data, rest.body)
      assert.equal((await call(client, 'list_websites')).data.items.length, before)
    })

    it('refuses bad arguments with VALIDATION_FAILED naming every field, like REST', async () => {
      const args = { category: 'castle', slug: 'Bad Slug', files: [{ path: 'index.html', contentt: 'x' }], color: 'red' }
      const result = await call(client, 'publish_website', args)
      assert.equal(result.isError, true)
      assert.equal(result.data.error.code, 'VALIDATION_FAILED')
      const rest = await server.api('POST', '/v1/websites', { token: alice.token, body: args })
      assert.deepEqual(result.data.error.fields, rest.body.error.fields)
      for (const field of ['category', 'slug', 'files[0].contentt', 'color']) assert.ok(field in result.data.error.fields, `${field} named`)

      const longId = await call(client, 'get_website', { websiteId: `web_${'x'.repeat(500)}` })
      assert.equal(longId.data.error.code, 'VALIDATION_FAILED')
      const wrongType = await call(client, 'publish_version', { websiteId: 42, files: 'index.html' })
      assert.deepEqual(Object.keys(wrongType.data.error.fields).sort(), ['files', 'websiteId'])
      const extra = await call(client, 'list_websites', { page: 2 })
      assert.deepEqual(extra.data.error.fields, { page: 'is not an accepted field' })
    })

    it("keeps another user's sites and jobs invisible: NOT_FOUND, never a hint that they exist", async () => {
      const own = await call(client, 'publish_website', { name: 'Alice private', category: 'other', files: bundle('Alice') })
      const bobClient = await connect(server, bob.token, { client: kind })
      try {
        for (const [tool, args] of [
          ['get_website', { websiteId: own.data.websiteId }],
          ['list_versions', { websiteId: own.data.websiteId }],
          ['get_job_status', { jobId: own.data.jobId }],
          ['publish_version', { websiteId: own.data.websiteId, files: bundle('Bob was here') }],
          ['promote_version', { websiteId: own.data.websiteId, versionId: own.data.jobId }],
        ] as const) {
          const result = await call(bobClient, tool, args)
          assert.equal(result.isError, true, tool)
          assert.equal(result.data.error.code, 'NOT_FOUND', tool)
        }
        const list = await call(bobClient, 'list_websites')
        assert.equal(
          list.data.items.some((s: any) => s.id === own.data.websiteId),
          false,
        )
        assert.match((await server.site(own.data.slug)).body.toString(), /Alice/)
      } finally {
        await bobClient.close()
      }
    })

    it('answers 401 without a valid token and 403 for a REST-only token, with the challenges', async () => {
      const anonymous = await server.api('POST', '/mcp', { body: INIT, headers: MCP_HEADERS })
      assert.equal(anonymous.status, 401)
      assert.equal(anonymous.body.error.code, 'AUTH_REQUIRED')
      assert.equal(anonymous.headers.get('www-authenticate'), `Bearer resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource/mcp", scope="mcp"`)

      const invalid = await server.api('POST', '/mcp', { token: `plinth_${'A'.repeat(43)}`, body: INIT, headers: MCP_HEADERS })
      assert.equal(invalid.status, 401)
      assert.match(invalid.headers.get('www-authenticate')!, /error="invalid_token"/)

      const restOnly = await server.user(undefined, 'rest')
      const refused = await server.api('POST', '/mcp', { token: restOnly.token, body: INIT, headers: MCP_HEADERS })
      assert.equal(refused.status, 403)
      assert.equal(refused.body.error.code, 'TOKEN_NOT_ALLOWED')
      assert.match(refused.headers.get('www-authenticate')!, /error="insufficient_scope"/)
      await assert.rejects(connect(server, restOnly.token, { client: kind }))

      const metadata = await server.api('GET', '/.well-known/oauth-protected-resource/mcp')
      assert.equal(metadata.body.resource, `${BASE_URL}/mcp`)
      assert.deepEqual(metadata.body.scopes_supported, ['mcp'])
    })

    it("refuses browser requests from other origins (DNS rebinding) and accepts Plinth's own", async () => {
      for (const origin of ['http://evil.example.com', 'http://api.plinth.test:9999', 'null', 'not a url']) {
        const response = await server.api('POST', '/mcp', { token: alice.token, body: INIT, headers: { ...MCP_HEADERS, origin } })
        assert.equal(response.status, 403, origin)
        assert.equal(response.body.error.code, 'ORIGIN_NOT_ALLOWED')
      }
      const own = await server.api('POST', '/mcp', { token: alice.token, body: INIT, headers: { ...MCP_HEADERS, origin: BASE_URL } })
      assert.equal(own.status, 200)
      assert.equal(own.body.result.serverInfo.name, 'plinth')
    })

    it('is stateless: GET and DELETE are 405, and a browser GET is the token page', async () => {
      const stream = await server.api('GET', '/mcp', { token: alice.token, headers: { accept: 'text/event-stream' } })
      assert.equal(stream.status, 405)
      assert.equal(stream.headers.get('allow'), 'POST')
      const end = await server.api('DELETE', '/mcp', { token: alice.token })
      assert.equal(end.status, 405)
      const page = await server.api('GET', '/mcp', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } })
      assert.equal(page.status, 200)
      assert.match(page.headers.get('content-type')!, /^text\/html/)
      assert.match(page.text, /Sign in to create a token/, 'the signed-out token page: a bearer token opens no session')
      assert.equal(page.headers.get('vary'), 'Accept')
    })

    it('answers protocol faults with JSON-RPC errors and oversize bodies with the envelope', async () => {
      const malformed = await server.api('POST', '/mcp', { token: alice.token, body: '{"jsonrpc":', headers: MCP_HEADERS })
      assert.equal(malformed.status, 400)
      assert.equal(malformed.body.error.code, -32700)
      const poisoned = await server.api('POST', '/mcp', {
        token: alice.token,
        body: '{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{"x":1}}',
        headers: MCP_HEADERS,
      })
      assert.equal(poisoned.body.error.code, -32700)
      const unknownTool = await server.api('POST', '/mcp', {
        token: alice.token,
        headers: MCP_HEADERS,
        body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'drop_database', arguments: {} } },
      })
      assert.equal(unknownTool.body.id, 7)
      assert.equal(unknownTool.body.error.code, -32602)
      const longName = await server.api('POST', '/mcp', {
        token: alice.token,
        headers: MCP_HEADERS,
        body: { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'x'.repeat(100_000), arguments: {} } },
      })
      assert.equal(longName.body.id, 8)
      assert.equal(longName.body.error.code, -32602)
      assert.ok(longName.text.length < 300, 'the name is not echoed in full')
      const huge = await server.api('POST', '/mcp', { token: alice.token, body: 'x'.repeat(17 * 1024 * 1024), headers: MCP_HEADERS })
      assert.equal(huge.status, 413)
      assert.equal(huge.body.error.code, 'PAYLOAD_TOO_LARGE')
    })

    it('says when to retry once the publish rate limit is reached', async () => {
      const limited = await sharedServer(store.name, { PLINTH_PUBLISH_RATE_PER_MINUTE: '1' })
      const carol = await limited.user()
      const c = await connect(limited, carol.token, { client: kind })
      try {
        assert.equal((await call(c, 'publish_website', { category: 'other', files: bundle() })).isError, false)
        const refused = await call(c, 'publish_website', { category: 'other', files: bundle() })
        assert.equal(refused.isError, true)
        assert.equal(refused.data.error.code, 'RATE_LIMITED')
        assert.ok(Number.isInteger(refused.data.error.retryAfter) && refused.data.error.retryAfter >= 1 && refused.data.error.retryAfter <= 60)
      } finally {
        await c.close()
      }
    })

    it('pages the versions of get_website and list_versions, newest first, while REST lists them all', async () => {
      const { data: first } = await call(client, 'publish_website', { name: 'Paged site', category: 'other', files: bundle('Paged v1') })
      const { websiteId } = first
      for (const n of [2, 3, 4, 5]) assert.equal((await call(client, 'publish_version', { websiteId, files: bundle(`Paged v${n}`) })).isError, false)
      await call(client, 'promote_version', { websiteId, versionId: first.jobId })

      const numbers: number[] = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = await call(client, 'list_versions', { websiteId, limit: 2, ...(cursor ? { cursor } : {}) })
        assert.equal(page.isError, false)
        assert.ok(page.data.versions.length <= 2)
        numbers.push(...page.data.versions.map((v: any) => v.version))
        cursor = page.data.nextCursor ?? undefined
        pages++
      } while (cursor)
      assert.deepEqual(numbers, [5, 4, 3, 2, 1])
      assert.equal(pages, 3)

      // The live version is described even when it is not on the page shown.
      const site = await call(client, 'get_website', { websiteId, limit: 1 })
      assert.deepEqual(
        site.data.versions.map((v: any) => v.version),
        [5],
      )
      assert.equal(typeof site.data.nextCursor, 'string')
      assert.equal(site.data.currentVersionId, first.jobId)
      assert.equal(site.data.currentVersion.version, 1)
      assert.equal(site.data.currentVersion.files.length, 2)
      const older = await call(client, 'get_website', { websiteId, limit: 50, cursor: site.data.nextCursor })
      assert.deepEqual(
        older.data.versions.map((v: any) => [v.version, v.isCurrent]),
        [
          [4, false],
          [3, false],
          [2, false],
          [1, true],
        ],
      )
      assert.equal(older.data.nextCursor, null)
      const byDefault = await call(client, 'list_versions', { websiteId })
      assert.equal(byDefault.data.versions.length, 5)

      const rest = await server.api('GET', `/v1/websites/${websiteId}`, { token: alice.token })
      assert.equal(rest.body.versions.length, 5)
      assert.equal(rest.body.nextCursor, undefined, 'REST getWebsite still lists every version')
      const restVersions = await server.api('GET', `/v1/websites/${websiteId}/versions`, { token: alice.token })
      assert.equal(restVersions.body.versions.length, 5)

      for (const args of [{ cursor: 'not-a-cursor' }, { cursor: Buffer.from('[0]').toString('base64url') }, { limit: 51 }, { limit: 0 }]) {
        const bad = await call(client, 'list_versions', { websiteId, ...args })
        assert.equal(bad.isError, true, JSON.stringify(args))
        assert.equal(bad.data.error.code, 'VALIDATION_FAILED')
      }
    })

    it('never echoes a long value in full in an error message', async () => {
      const key = 'k'.repeat(5000)
      const extra = await call(client, 'get_website', { websiteId: 'web_x', [key]: 1 })
      assert.equal(extra.data.error.code, 'VALIDATION_FAILED')
      const [field] = Object.keys(extra.data.error.fields)
      assert.ok(field !== undefined && field.length <= 100, 'the field name is shortened')
      assert.ok(extra.data.error.message.length < 500, extra.data.error.message.slice(0, 200))

      const taken = await call(client, 'publish_website', { name: 'Echo', category: 'other', files: bundle() })
      const again = await call(client, 'publish_website', { slug: taken.data.slug, category: 'other', files: bundle() })
      assert.equal(again.data.error.code, 'SLUG_TAKEN')
      assert.ok(again.data.error.message.length < 300)
    })

    it('advertises no tools.listChanged: the tool list never changes while a client is connected', async () => {
      assert.deepEqual(client.getServerCapabilities()?.tools, {})
      const init = await server.api('POST', '/mcp', { token: alice.token, body: INIT, headers: MCP_HEADERS })
      assert.equal(init.status, 200)
      assert.deepEqual(init.body.result.capabilities, { tools: {} })
      assert.match(client.getInstructions() ?? '', /PUBLISH_INVALID/)
    })

    it("says where sites are served with this instance's own scheme and domain, in the instructions and the tools", async () => {
      // The test instance serves sites over http at {slug}.plinth.test:8080.
      assert.match(client.getInstructions() ?? '', /http:\/\/\{slug\}\.plinth\.test:8080\//)
      const { tools } = await client.listTools()
      const publish = tools.find((t) => t.name === 'publish_website')!
      assert.match(publish.description ?? '', /http:\/\/\{slug\}\.plinth\.test:8080\//)
      const everything = JSON.stringify({ instructions: client.getInstructions(), tools })
      assert.doesNotMatch(everything, /https:\/\/\{slug\}/, 'no https:// site URL on an http instance')
    })

    it(`keeps the default tools/list result under ${TOOLS_LIST_BUDGET} bytes of JSON, with every publishing and draft tool`, async () => {
      const raw = await server.api('POST', '/mcp', {
        token: alice.token,
        body: TOOLS_LIST,
        headers: { ...MCP_HEADERS, 'mcp-protocol-version': '2025-11-25' },
      })
      assert.equal(raw.status, 200, raw.text)
      const size = Buffer.byteLength(JSON.stringify(raw.body.result))
      const names = raw.body.result.tools.map((t: { name: string }) => t.name)
      for (const name of [...PUBLISHING_TOOLS, ...DRAFT_TOOLS]) assert.ok(names.includes(name), `${name} is listed by default`)
      assert.ok(size < TOOLS_LIST_BUDGET, `tools/list is ${size} bytes`)
      // The site domain is named once, so a longer one (a host name has at most 253 characters) still fits.
      const listing = JSON.stringify(raw.body.result)
      assert.equal(listing.split(SITE_DOMAIN).length - 1, 1, 'the listing names the site domain once')
      assert.ok(size - SITE_DOMAIN.length + 253 < TOOLS_LIST_BUDGET, `tools/list is ${size} bytes, too many for a 253-character site domain`)
      const listed = Buffer.byteLength(JSON.stringify(await client.listTools()))
      assert.ok(listed < TOOLS_LIST_BUDGET, `tools/list as the ${kind} client reads it is ${listed} bytes`)
    })
  })
}
