/**
 * The error envelope on every failure path (unknown routes, wrong methods, internal faults) and
 * the OpenAPI document: served on the API host, OpenAPI 3.1.0, valid under the strict validator,
 * exactly the documented operations, and every response this file receives from the API
 * validates against the schema the document declares for that operation and status.
 */

import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { type Duplex, Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import { compileErrors, validate } from '@readme/openapi-parser'
import { Ajv2020 } from 'ajv/dist/2020.js'
import ajvFormats from 'ajv-formats'
import { sql } from 'kysely'
import { clientErrors } from '../../src/http/errors.http.ts'
import { type ApiResponse, BASE_URL, bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const OPERATION_IDS = [
  'getApiIndex',
  'listWebsites',
  'createWebsite',
  'getWebsite',
  'deleteWebsite',
  'setWebsitePassword',
  'removeWebsitePassword',
  'listWebsiteVersions',
  'createWebsiteVersion',
  'getJob',
  'suggestSlug',
  'promoteWebsiteVersion',
  'getVersionFile',
  'diffWebsiteVersions',
  'getPageScreenshot',
  'getBrowserReport',
  'getSiteTraffic',
  'listCollections',
  'createCollection',
  'getCollection',
  'updateCollection',
  'listEntries',
  'upsertEntries',
  'getEntry',
  'putEntry',
  'deleteEntry',
  'createUploads',
  'putUploadContent',
  'importAsset',
  'createDraft',
  'listDrafts',
  'getDraft',
  'discardDraft',
  'publishDraft',
  'moveDraftFile',
  'readDraftFile',
  'writeDraftFile',
  'editDraftFile',
  'deleteDraftFile',
  'listForms',
  'listFormSubmissions',
  'exportFormSubmissions',
  'deleteFormSubmissions',
  'getFormSubmission',
  'markFormSubmission',
  'deleteFormSubmission',
  'getFormSubmissionFile',
  'getFormSettings',
  'setFormSettings',
  'eraseFormSubmissions',
  'listWebhooks',
  'createWebhook',
  'updateWebhook',
  'deleteWebhook',
  'listWebhookDeliveries',
  'redeliverWebhookDelivery',
  'requestPromotion',
  'listPromotionRequests',
  'getPromotionRequest',
  'withdrawPromotionRequest',
  'listSchedules',
  'cancelSchedule',
  'setPreviewExpiry',
  'updateDraft',
]
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
const DOC_ID = 'urn:plinth:openapi'
// ajv-formats is CommonJS: under NodeNext its default import is the module object for TypeScript.
const addFormats = ((ajvFormats as unknown as { default?: typeof ajvFormats }).default ?? ajvFormats) as unknown as (ajv: Ajv2020) => Ajv2020

/** Strict: every rule the parser can downgrade to a warning is an error, and warnings must be empty too. */
const STRICT_RULES = {
  'array-without-items': 'error',
  'duplicate-non-request-body-parameters': 'error',
  'duplicate-operation-id': 'error',
  'non-optional-path-parameters': 'error',
  'path-parameters-not-in-parameters': 'error',
  'path-parameters-not-in-path': 'error',
} as const

type OpenApi = {
  openapi: string
  info: { title: string; version: string; description?: string }
  paths: Record<string, Record<string, any>>
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, any> }
}

/** A GET with an explicit Host header (fetch cannot set one). */
function getWithHost(server: TestServer, host: string, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET', headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Sends raw bytes on a new connection; resolves with all that comes back once the server closes it. */
function rawExchange(server: TestServer, bytes: string): Promise<string> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.end(bytes))
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
    socket.on('error', reject)
  })
}

function assertEnvelope(res: ApiResponse, status: number, code: string) {
  assert.equal(res.status, status, res.text)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json(;|$)/)
  assert.deepEqual(Object.keys(res.body), ['error'])
  assert.equal(res.body.error.code, code)
  assert.equal(typeof res.body.error.message, 'string')
  assert.ok(res.body.error.message.length > 0)
}

/** An internal fault must say nothing about what failed inside. */
function assertOpaqueInternal(res: ApiResponse) {
  assertEnvelope(res, 500, 'INTERNAL')
  assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message'], 'no fields, violations, stack or cause')
  assert.doesNotMatch(
    res.text,
    /stack|\bat [\w.<>]+ \(|\.ts:\d+|node_modules|\bselect\b|\bfrom\b|\binsert\b|sqlite|postgres|relation|no such table|versions|tokens|destroy|pool|kysely/i,
    res.text,
  )
}

for (const store of STORES) {
  describe(`Errors and the OpenAPI document (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let owner: { id: string; email: string; token: string }
    let doc: OpenApi
    let ajv: Ajv2020

    /** Validates a real response against what the document declares for this operation and status. */
    const conforms = (res: ApiResponse, method: string, template: string) => {
      const operation = doc.paths[template]?.[method.toLowerCase()]
      assert.ok(operation, `${method} ${template} is documented`)
      const declared = operation.responses[String(res.status)]
      assert.ok(declared, `${operation.operationId} documents status ${res.status} (${res.text.slice(0, 200)})`)
      const schema = declared.content?.['application/json']?.schema
      assert.ok(schema, `${operation.operationId} ${res.status} declares a JSON schema`)
      assert.match(schema.$ref ?? '', /^#\/components\/schemas\/\w+$/, 'responses point at named component schemas')
      conformsTo(res.body, schema.$ref.split('/').pop(), `${operation.operationId} ${res.status}`)
    }
    const conformsTo = (body: unknown, component: string, what = component) => {
      const check = ajv.getSchema(`${DOC_ID}#/components/schemas/${component}`)
      assert.ok(check, `component ${component} exists`)
      assert.ok(check(body), `${what} does not match ${component}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(body).slice(0, 800)}`)
    }

    const call = async (method: string, url: string, template: string, options: Parameters<TestServer['api']>[2] = {}) => {
      const res = await server.api(method, url, options)
      conforms(res, method, template)
      return res
    }

    before(async () => {
      server = await startTestServer(store.name)
      owner = await server.user()
      const res = await server.api('GET', '/openapi.json')
      assert.equal(res.status, 200, res.text)
      doc = res.body
      ajv = new Ajv2020({ strict: true, allErrors: true })
      addFormats(ajv)
      // The document is registered whole, so the component schemas' own "#/components/schemas/..."
      // references resolve exactly as written; "components" is the only non-schema keyword used.
      ajv.addKeyword('components')
      ajv.addSchema({ $id: DOC_ID, components: { schemas: doc.components.schemas } })
    })
    after(() => server?.close())

    test('an unknown route is 404 NOT_FOUND in the envelope, with or without a token', async () => {
      for (const [method, url, accept] of [
        ['GET', '/nope', 'application/json'],
        ['GET', '/v1/nope', '*/*'],
        ['POST', '/v1/websites/web_x/versions/job_y/unknown', '*/*'],
        ['GET', '/v2/websites', 'application/json'],
      ] as const) {
        for (const token of [undefined, owner.token]) {
          const res = await server.api(method, url, { token, headers: { accept } })
          assertEnvelope(res, 404, 'NOT_FOUND')
          conformsTo(res.body, 'Error')
        }
      }
      // Outside the API, a client that does not ask for JSON gets the web site's 404 (markdown).
      const page = await server.api('GET', '/nope')
      assert.equal(page.status, 404)
      assert.match(page.text, /^# Not found/)
    })

    test("what Node's HTTP parser refuses (a malformed request, headers over 16 KiB) gets the envelope, then the connection closes", async () => {
      const cases = [
        ['GET /v1 HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n', 400, 'BAD_REQUEST'],
        ['GET /v1 with spaces HTTP/1.1\r\nHost: a\r\n\r\n', 400, 'BAD_REQUEST'],
        [`GET /v1/websites/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: a\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
      ] as const
      for (const [request, status, code] of cases) {
        const answer = await rawExchange(server, request)
        const [head = '', body = ''] = answer.split('\r\n\r\n')
        assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), answer)
        assert.match(head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i)
        assert.match(head, /\r\nConnection: close/i)
        const envelope = JSON.parse(body)
        assert.deepEqual(Object.keys(envelope), ['error'])
        assert.equal(envelope.error.code, code)
        conformsTo(envelope, 'Error')
      }
      // The server goes on answering.
      assertEnvelope(await server.api('GET', '/v1/nope', { headers: { accept: 'application/json' } }), 404, 'NOT_FOUND')
    })

    test("a request slower than Node's timeouts is 408 REQUEST_TIMEOUT in the envelope; a reset connection gets nothing", () => {
      const written: string[] = []
      const socket = new Writable({ write: (chunk: Buffer, _encoding, done) => (written.push(chunk.toString('utf8')), done()) })
      clientErrors(Object.assign(new Error('timed out'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket as unknown as Duplex)
      const [head = '', body = ''] = written.join('').split('\r\n\r\n')
      assert.match(head, /^HTTP\/1\.1 408 Request Timeout\r\n/)
      assert.equal(JSON.parse(body).error.code, 'REQUEST_TIMEOUT')
      conformsTo(JSON.parse(body), 'Error')
      assert.equal(socket.destroyed, true, 'the connection is closed')
      const reset = new Writable({ write: (_chunk, _encoding, done) => (written.push('more'), done()) })
      clientErrors(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), reset as unknown as Duplex)
      assert.ok(!written.includes('more'))
    })

    test('a path parameter the router refuses (over 100 characters, or bad percent-encoding) is a documented 404 NOT_FOUND envelope', async () => {
      const long = `web_${'x'.repeat(120)}`
      const cases: Array<[string, string, string]> = [
        ['GET', `/v1/websites/${long}`, '/v1/websites/{websiteId}'],
        ['GET', `/v1/websites/${long}/versions`, '/v1/websites/{websiteId}/versions'],
        ['POST', `/v1/websites/${long}/versions`, '/v1/websites/{websiteId}/versions'],
        ['POST', `/v1/websites/web_x/versions/job_${'y'.repeat(120)}/promote`, '/v1/websites/{websiteId}/versions/{versionId}/promote'],
        ['GET', `/v1/jobs/job_${'y'.repeat(120)}`, '/v1/jobs/{jobId}'],
        ['GET', '/v1/websites/%E0%A4%A', '/v1/websites/{websiteId}'],
        ['GET', '/v1/jobs/%', '/v1/jobs/{jobId}'],
      ]
      for (const [method, url, template] of cases) {
        const body = method === 'POST' && url.endsWith('/versions') ? { files: bundle() } : undefined
        const res = await call(method, url, template, { token: owner.token, body })
        assertEnvelope(res, 404, 'NOT_FOUND')
      }
    })

    test('a wrong method on a known path is 405 METHOD_NOT_ALLOWED with Allow', async () => {
      const cases: Array<[string, string, string[]]> = [
        ['DELETE', '/v1/websites', ['GET', 'HEAD', 'POST']],
        ['PUT', '/v1/websites/web_anything', ['DELETE', 'GET', 'HEAD']],
        ['PATCH', '/v1/websites/web_anything/versions', ['GET', 'HEAD', 'POST']],
        ['GET', '/v1/websites/web_anything/versions/job_x/promote', ['POST']],
        ['DELETE', '/v1/jobs/job_anything', ['GET', 'HEAD']],
        ['POST', '/v1', ['GET', 'HEAD']],
      ]
      for (const [method, url, allowed] of cases) {
        const res = await server.api(method, url, { token: owner.token })
        assertEnvelope(res, 405, 'METHOD_NOT_ALLOWED')
        conformsTo(res.body, 'Error')
        const allow = (res.headers.get('allow') ?? '')
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean)
          .sort()
        assert.deepEqual(allow, [...allowed].sort(), `${method} ${url}`)
      }
    })

    test('a query parameter an operation does not take is 422 VALIDATION_FAILED naming it, and changes nothing', async () => {
      const site = await server.api('POST', '/v1/websites', { token: owner.token, body: { category: 'other', files: bundle() } })
      assert.equal(site.status, 201, site.text)
      const { websiteId } = site.body
      const cases: Array<[string, string, string, unknown?]> = [
        ['GET', '/v1?verbose=1', '/v1'],
        ['GET', '/v1/websites?limt=5', '/v1/websites'],
        ['GET', `/v1/websites/${websiteId}?fields=slug`, '/v1/websites/{websiteId}'],
        ['GET', `/v1/websites/${websiteId}/versions/1/files/index.html?offset=1&lines=5`, '/v1/websites/{websiteId}/versions/{versionId}/files/{path}'],
        ['POST', `/v1/websites/${websiteId}/versions?dryRun=true`, '/v1/websites/{websiteId}/versions', { files: bundle('Changed') }],
      ]
      for (const [method, url, template, body] of cases) {
        const res = await call(method, url, template, { token: owner.token, ...(body === undefined ? {} : { body }) })
        assertEnvelope(res, 422, 'VALIDATION_FAILED')
        const unknown = new URL(url, BASE_URL).searchParams
        const named = [...unknown.keys()].filter((name) => !['offset'].includes(name))
        for (const name of named) {
          assert.match(res.body.error.message, new RegExp(name), `${method} ${url}: ${res.body.error.message}`)
          assert.equal(res.body.error.fields[name], 'is not an accepted query parameter', `${method} ${url}`)
        }
      }
      const versions = await server.api('GET', `/v1/websites/${websiteId}/versions`, { token: owner.token })
      assert.equal(versions.body.versions.length, 1, 'the refused publish stored nothing')
      // A wrong method stays 405, whatever the query.
      assertEnvelope(await server.api('DELETE', '/v1/websites?limt=5', { token: owner.token }), 405, 'METHOD_NOT_ALLOWED')
    })

    test('an internal fault is 500 INTERNAL with no stack and no SQL: database closed underneath a running server', async () => {
      // A dedicated server whose database connection is destroyed while it runs: the token
      // lookup of the next authenticated request then fails inside the driver.
      const broken = await startTestServer(store.name)
      try {
        const user = await broken.user()
        assert.equal((await broken.api('GET', '/v1/websites', { token: user.token })).status, 200)
        await broken.server.db.kysely.destroy()
        for (const [method, url, body] of [
          ['GET', '/v1/websites'],
          ['POST', '/v1/websites', { category: 'other', files: bundle() }],
        ] as const) {
          const res = await broken.api(method, url, { token: user.token, body })
          assertOpaqueInternal(res)
          conformsTo(res.body, 'Error')
        }
        assert.equal((await broken.api('GET', '/v1')).status, 200, 'routes that need no database still answer')
      } finally {
        await broken.server.close().catch(() => {})
        await broken.store.dispose()
      }
    })

    test('an internal fault is 500 INTERNAL with no stack and no SQL: a table missing under a running server', async () => {
      // A dedicated server whose versions table is renamed away: listing websites then fails with
      // a driver error that names the table and carries the SQL.
      const broken = await startTestServer(store.name)
      try {
        const user = await broken.user()
        const created = await broken.api('POST', '/v1/websites', { token: user.token, body: { category: 'other', files: bundle() } })
        assert.equal(created.status, 201)
        await sql`ALTER TABLE versions RENAME TO versions_gone`.execute(broken.server.db.kysely)
        for (const url of ['/v1/websites', `/v1/websites/${created.body.websiteId}`, `/v1/jobs/${created.body.jobId}`]) {
          const res = await broken.api('GET', url, { token: user.token })
          assertOpaqueInternal(res)
          const template = url === '/v1/websites' ? '/v1/websites' : url.startsWith('/v1/jobs') ? '/v1/jobs/{jobId}' : '/v1/websites/{websiteId}'
          const declared = doc.paths[template]?.get.responses['500']
          assert.equal(declared?.content['application/json'].schema.$ref, '#/components/schemas/Error', `${template} documents 500`)
          conformsTo(res.body, 'Error')
        }
      } finally {
        await broken.server.close().catch(() => {})
        await broken.store.dispose()
      }
    })

    test('/openapi.json is served on the API host as OpenAPI 3.1.0, version 1.0.0', async () => {
      const res = await getWithHost(server, new URL(BASE_URL).host, '/openapi.json')
      assert.equal(res.status, 200)
      assert.match(String(res.headers['content-type']), /^application\/json/)
      const served = JSON.parse(res.text)
      assert.deepEqual(served, doc, 'the same document as on any other non-site host of this process')
      assert.equal(served.openapi, '3.1.0')
      assert.equal(served.info.version, '1.0.0')
      assert.equal(typeof served.info.title, 'string')
      const index = await call('GET', '/v1', '/v1')
      assert.equal(index.body.openapi, `${BASE_URL}/openapi.json`, 'the API index points at it')
    })

    test('the document passes the strict OpenAPI validator', async () => {
      const result = await validate(structuredClone(doc) as any, { validate: { rules: { openapi: STRICT_RULES } } })
      assert.equal(result.valid, true, result.valid ? '' : compileErrors(result))
      assert.equal(result.specification, 'OpenAPI')
      assert.deepEqual(result.warnings, [], 'no warnings either')
    })

    test('the document has exactly the documented operations, each with an operationId', () => {
      const ids: string[] = []
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of METHODS) {
          const operation = item[method]
          if (!operation) continue
          assert.equal(typeof operation.operationId, 'string', `${method.toUpperCase()} ${path} has an operationId`)
          ids.push(operation.operationId)
        }
      }
      assert.deepEqual(ids.sort(), [...OPERATION_IDS].sort())
      assert.ok(!('/openapi.json' in doc.paths) && !Object.keys(doc.paths).some((p) => p.startsWith('/.well-known')), 'infrastructure routes are hidden')
    })

    test('every authenticated operation documents the bearer scheme with the scope mcp, and 401 with the Error schema', async () => {
      assert.deepEqual(
        { type: doc.components.securitySchemes.bearerAuth?.type, scheme: doc.components.securitySchemes.bearerAuth?.scheme },
        { type: 'http', scheme: 'bearer' },
      )
      assert.match(doc.components.securitySchemes.bearerAuth.description, /carries the scope `mcp`/, 'the scheme states the scope')
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of METHODS) {
          const operation = item[method]
          if (!operation) continue
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            if (Number(status) < 400) continue
            assert.equal(response.content?.['application/json']?.schema?.$ref, '#/components/schemas/Error', `${operation.operationId} ${status} is an Error`)
          }
          if (operation.operationId === 'putUploadContent') {
            assert.deepEqual(operation.security, [], 'the upload PUT is authorized by its signed URL, not a token')
            continue
          }
          if (operation.operationId === 'getApiIndex') {
            assert.deepEqual(operation.security, [], 'getApiIndex needs no token')
            continue
          }
          assert.deepEqual(
            operation.security,
            [{ bearerAuth: ['mcp'] }],
            `${operation.operationId} (${method.toUpperCase()} ${path}) uses the bearer scheme with the scope mcp`,
          )
          assert.equal(
            operation.responses['401']?.content?.['application/json']?.schema?.$ref,
            '#/components/schemas/Error',
            `${operation.operationId} documents 401`,
          )
        }
      }
      const anonymous = await call('GET', '/v1/websites', '/v1/websites')
      assertEnvelope(anonymous, 401, 'AUTH_REQUIRED')
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer .*resource_metadata="/)
    })

    test('every response has a description of its own, and the descriptions show the addresses of this instance', () => {
      for (const item of Object.values(doc.paths)) {
        for (const method of METHODS) {
          const operation = item[method]
          if (!operation) continue
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            assert.equal(typeof response.description, 'string', `${operation.operationId} ${status}`)
            assert.ok(
              response.description.length > 0 && response.description !== 'Default Response',
              `${operation.operationId} ${status}: ${response.description}`,
            )
          }
        }
      }
      // The test server runs on http with sites under plinth.test:8080.
      assert.ok(doc.info.description?.includes('http://{slug}.plinth.test:8080/'), doc.info.description)
      assert.ok(!JSON.stringify(doc).includes('{site_domain}'), 'no placeholder for the site domain')
      assert.ok(doc.components.securitySchemes.bearerAuth.description.includes(`${BASE_URL}/mcp`), 'where tokens are minted and MCP is')
    })

    test('request fields with a default are optional and carry no schema default; the default is in the description', () => {
      const defaults: string[] = []
      JSON.stringify(doc, (key, value) => {
        if (key === 'default') defaults.push(JSON.stringify(value))
        return value
      })
      assert.deepEqual(defaults, [], 'no `default` anywhere: generated clients would make such a field required')
      const promote = doc.components.schemas.PublishVersionRequest as any
      assert.ok(!(promote.required ?? []).includes('promote'))
      assert.match(promote.properties.promote.description, /Default true/)
      const field = doc.components.schemas.Field as any
      assert.ok(!field.required.includes('required'))
      assert.match(field.properties.required.description, /Default false/)
      const limit = doc.paths['/v1/websites/{websiteId}/collections/{collection}/entries']?.get.parameters.find((p: any) => p.name === 'limit')
      assert.equal(limit.required, false)
      assert.match(limit.description, /Default 20/)
    })

    test('stated constraints are shown: bundle file counts and batch items typed as EntryInput', () => {
      for (const name of ['PublishWebsiteRequest', 'PublishVersionRequest']) {
        const files = (doc.components.schemas[name] as any).properties.files
        assert.equal(files.minItems, 1, name)
        assert.equal(files.maxItems, 40, name)
        assert.deepEqual(files.items, { $ref: '#/components/schemas/PublishFile' })
      }
      const entries = (doc.components.schemas.EntryBatchRequest as any).properties.entries
      assert.deepEqual(entries.items, { $ref: '#/components/schemas/EntryInput' })
      assert.equal(entries.maxItems, 100)
      assert.ok(!JSON.stringify(doc).includes('x-client-only'), 'the annotation itself is not published')
    })

    test('a body is required exactly where the API needs one: starting and publishing a draft, promoting and asking for a promotion take none', () => {
      const optional = new Set(['createDraft', 'publishDraft', 'promoteWebsiteVersion', 'requestPromotion'])
      for (const operations of Object.values(doc.paths) as any[]) {
        for (const operation of Object.values<any>(operations)) {
          if (!operation?.requestBody) continue
          assert.equal(operation.requestBody.required, !optional.has(operation.operationId), `${operation.operationId} requestBody.required`)
        }
      }
      assert.ok(!JSON.stringify(doc).includes('x-plinth-optional-body'), 'the marker itself is not published')
    })

    test('every operation that takes a time to come (expiresAt, promoteAt) lists the 400 BAD_REQUEST a past or unreadable one gets', () => {
      const schemaOf = (schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema)
      const timed: string[] = []
      for (const operations of Object.values(doc.paths) as any[]) {
        for (const operation of Object.values<any>(operations)) {
          const body = schemaOf(operation?.requestBody?.content?.['application/json']?.schema)
          if (!body?.properties || !['expiresAt', 'promoteAt'].some((field) => field in body.properties)) continue
          timed.push(operation.operationId)
          assert.match(operation.responses['400']?.description ?? '', /`BAD_REQUEST`/, `${operation.operationId} lists BAD_REQUEST`)
        }
      }
      assert.deepEqual(timed.sort(), ['createDraft', 'createWebsiteVersion', 'promoteWebsiteVersion', 'setPreviewExpiry', 'updateDraft'])
    })

    test('createWebsite documents 201, 409, 422 and 429', () => {
      const createWebsite = doc.paths['/v1/websites']?.post
      const responses = createWebsite.responses
      assert.equal(createWebsite.operationId, 'createWebsite')
      for (const status of ['201', '409', '422', '429']) assert.ok(responses[status], `createWebsite documents ${status}`)
      assert.equal(responses['201'].content['application/json'].schema.$ref, '#/components/schemas/PublishWebsiteResult')
      assert.equal(createWebsite.requestBody?.content?.['application/json']?.schema?.$ref, '#/components/schemas/PublishWebsiteRequest')
    })

    test('one Warning schema: every publish result and every Version lists warnings of it, always', () => {
      const warning = doc.components.schemas.Warning as any
      assert.deepEqual(Object.keys(warning.properties), ['code', 'path', 'line', 'message'])
      assert.deepEqual(warning.required, ['code', 'path', 'message'])
      for (const name of ['PublishWebsiteResult', 'PublishVersionResult', 'Version']) {
        const schema = doc.components.schemas[name] as any
        assert.deepEqual(schema.properties.warnings.items, { $ref: '#/components/schemas/Warning' }, name)
        assert.ok(schema.required.includes('warnings'), `${name} always has warnings`)
      }
      assert.deepEqual((doc.components.schemas.DraftFileWritten as any).properties.warnings.items, { $ref: '#/components/schemas/Warning' })
    })

    test('every response the API returns validates against the schema the document declares for it', async () => {
      const editor = await server.user()
      // Successes of every operation.
      const index = await call('GET', '/v1', '/v1')
      assert.equal(index.status, 200)
      const created = await call('POST', '/v1/websites', '/v1/websites', {
        token: owner.token,
        body: { name: 'Schema check', slug: 'schema-check', description: 'A site to check schemas', category: 'portfolio', files: bundle('Schema') },
      })
      assert.equal(created.status, 201)
      const { websiteId, jobId } = created.body
      const version = await call('POST', `/v1/websites/${websiteId}/versions`, '/v1/websites/{websiteId}/versions', {
        token: owner.token,
        body: { files: bundle('Schema v2'), message: 'second', promote: false },
      })
      assert.equal(version.status, 201)
      assert.equal(version.body.isCurrent, false)
      await server.server.services.members.share(websiteId, editor.email, 'editor')

      for (const token of [owner.token, editor.token]) {
        const website = await call('GET', `/v1/websites/${websiteId}`, '/v1/websites/{websiteId}', { token })
        assert.equal(website.status, 200)
        assert.equal(website.body.role, token === owner.token ? 'owner' : 'editor')
        const list = await call('GET', '/v1/websites', '/v1/websites', { token })
        assert.equal(list.status, 200)
        assert.ok(list.body.items.some((s: { id: string }) => s.id === websiteId))
        const versions = await call('GET', `/v1/websites/${websiteId}/versions`, '/v1/websites/{websiteId}/versions', { token })
        assert.deepEqual(
          versions.body.versions.map((v: { version: number }) => v.version),
          [2, 1],
        )
        for (const id of [jobId, version.body.jobId]) {
          const job = await call('GET', `/v1/jobs/${id}`, '/v1/jobs/{jobId}', { token })
          assert.equal(job.status, 200)
          assert.equal(job.body.status, 'ready')
        }
      }
      const promoted = await call(
        'POST',
        `/v1/websites/${websiteId}/versions/${version.body.jobId}/promote`,
        '/v1/websites/{websiteId}/versions/{versionId}/promote',
        { token: owner.token },
      )
      assert.equal(promoted.status, 200)
      assert.equal(promoted.body.isCurrent, true)
      for (const value of ['Schema check', 'schema-check', 'My New Site', '--', 'admin', '9lives']) {
        const suggestion = await call('GET', `/v1/slugs/suggest?value=${encodeURIComponent(value)}`, '/v1/slugs/suggest', { token: owner.token })
        assert.equal(suggestion.status, 200)
        assert.equal(typeof suggestion.body.suggestion, 'string')
      }

      // Error envelopes, each at a status its operation documents.
      assertEnvelope(await call('GET', '/v1/websites', '/v1/websites', { token: 'plinth_not-a-real-token' }), 401, 'AUTH_REQUIRED')
      assertEnvelope(await call('GET', '/v1/websites/web_unknown', '/v1/websites/{websiteId}', { token: owner.token }), 404, 'NOT_FOUND')
      assertEnvelope(await call('GET', '/v1/jobs/job_unknown', '/v1/jobs/{jobId}', { token: owner.token }), 404, 'NOT_FOUND')
      assertEnvelope(await call('GET', '/v1/websites/web_unknown/versions', '/v1/websites/{websiteId}/versions', { token: owner.token }), 404, 'NOT_FOUND')
      assertEnvelope(
        await call('POST', '/v1/websites', '/v1/websites', { token: owner.token, body: { slug: 'schema-check', category: 'other', files: bundle() } }),
        409,
        'SLUG_TAKEN',
      )
      const invalid = await call('POST', '/v1/websites', '/v1/websites', {
        token: owner.token,
        body: { category: 'other', files: [{ path: 'page.html', content: '<script src="https://cdn.example.com/x.js"></script>' }] },
      })
      assertEnvelope(invalid, 422, 'PUBLISH_INVALID')
      assert.deepEqual(invalid.body.error.violations.map((v: { code: string }) => v.code).sort(), ['EXTERNAL_URL', 'MISSING_INDEX'])
      assertEnvelope(
        await call('POST', '/v1/websites', '/v1/websites', { token: owner.token, body: { category: 'castle', files: bundle() } }),
        422,
        'VALIDATION_FAILED',
      )
      assertEnvelope(
        await call('POST', `/v1/websites/${websiteId}/versions`, '/v1/websites/{websiteId}/versions', {
          token: owner.token,
          body: { files: bundle(), promote: 'yes' },
        }),
        422,
        'VALIDATION_FAILED',
      )
      assertEnvelope(await call('GET', '/v1/slugs/suggest', '/v1/slugs/suggest', { token: owner.token }), 422, 'VALIDATION_FAILED')
      assertEnvelope(
        await call('POST', '/v1/websites', '/v1/websites', { token: owner.token, body: '{"category":', headers: { 'content-type': 'application/json' } }),
        400,
        'INVALID_JSON',
      )
      // An empty body is no body, whatever type it declares: here the route needs one.
      const empty = await call('POST', '/v1/websites', '/v1/websites', { token: owner.token, body: '', headers: { 'content-type': 'application/json' } })
      assertEnvelope(empty, 422, 'VALIDATION_FAILED')
      assert.deepEqual(empty.body.error.fields, { body: 'must be object' })
      assertEnvelope(
        await call('POST', '/v1/websites', '/v1/websites', {
          token: owner.token,
          body: 'category=other',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      )
      const promote = '/v1/websites/{websiteId}/versions/{versionId}/promote'
      assertEnvelope(await call('POST', `/v1/websites/${websiteId}/versions/job_unknown/promote`, promote, { token: owner.token }), 404, 'NOT_FOUND')
      assertEnvelope(await call('POST', `/v1/websites/${websiteId}/versions/99/promote`, promote, { token: owner.token }), 404, 'NOT_FOUND')
      // A stored version with a file where a collection created later serves its entries.
      const shadowing = await call('POST', `/v1/websites/${websiteId}/versions`, '/v1/websites/{websiteId}/versions', {
        token: owner.token,
        body: { files: bundle('Notes', [{ path: 'notes-first.html', content: '<p>First</p>' }]), promote: false },
      })
      assert.equal(shadowing.status, 201, shadowing.text)
      const notes = await call('POST', `/v1/websites/${websiteId}/collections`, '/v1/websites/{websiteId}/collections', {
        token: owner.token,
        body: { name: 'notes', label: 'Notes', fields: [] },
      })
      assert.equal(notes.status, 201, notes.text)
      assertEnvelope(
        await call('POST', `/v1/websites/${websiteId}/versions/${shadowing.body.version}/promote`, promote, { token: owner.token }),
        409,
        'PROMOTE_CONFLICT',
      )
      assertEnvelope(
        await call('POST', `/v1/websites/${websiteId}/versions/${jobId}/promote`, promote, {
          token: owner.token,
          body: '{"x":',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'INVALID_JSON',
      )
      assertEnvelope(
        await call('POST', `/v1/websites/${websiteId}/versions/${jobId}/promote`, promote, {
          token: owner.token,
          body: 'now',
          headers: { 'content-type': 'text/plain' },
        }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      )
      const file = '/v1/websites/{websiteId}/versions/{versionId}/files/{path}'
      const read = await call('GET', `/v1/websites/${websiteId}/versions/1/files/index.html?offset=1&limit=1`, file, { token: owner.token })
      assert.equal(read.status, 200, read.text)
      assert.deepEqual(read.body.lines, { from: 1, to: 1, total: 1 })
      assertEnvelope(await call('GET', `/v1/websites/${websiteId}/versions/1/files/missing.html`, file, { token: owner.token }), 404, 'NOT_FOUND')
      assertEnvelope(await call('GET', `/v1/websites/${websiteId}/versions/1/files/index.html?limit=0`, file, { token: owner.token }), 422, 'VALIDATION_FAILED')
      const diff = '/v1/websites/{websiteId}/versions/{a}/diff/{b}'
      const compared = await call('GET', `/v1/websites/${websiteId}/versions/1/diff/${shadowing.body.jobId}`, diff, { token: owner.token })
      assert.equal(compared.status, 200, compared.text)
      assert.deepEqual(
        compared.body.files.map((f: { path: string; status: string }) => `${f.path}:${f.status}`),
        ['index.html:changed', 'notes-first.html:added'],
      )
      assertEnvelope(await call('GET', `/v1/websites/${websiteId}/versions/1/diff/99`, diff, { token: owner.token }), 404, 'NOT_FOUND')
      const versions = '/v1/websites/{websiteId}/versions'
      const patched = await call('POST', `/v1/websites/${websiteId}/versions`, versions, {
        token: owner.token,
        body: { baseVersion: shadowing.body.version, changes: [{ op: 'delete', path: 'notes-first.html' }], promote: false },
      })
      assert.equal(patched.status, 201, patched.text)
      const stale = { baseVersion: 1, changes: [{ op: 'edit', path: 'index.html', edits: [{ oldText: 'Schema', newText: 'Plan' }] }] }
      assertEnvelope(await call('POST', `/v1/websites/${websiteId}/versions`, versions, { token: owner.token, body: stale }), 409, 'VERSION_CONFLICT')
      const missing = {
        ...stale,
        baseVersion: patched.body.version,
        changes: [{ op: 'edit', path: 'index.html', edits: [{ oldText: 'Nowhere', newText: 'x' }] }],
      }
      assertEnvelope(await call('POST', `/v1/websites/${websiteId}/versions`, versions, { token: owner.token, body: missing }), 422, 'EDIT_NO_MATCH')
      const stranger = await server.user()
      assertEnvelope(await call('GET', `/v1/websites/${websiteId}`, '/v1/websites/{websiteId}', { token: stranger.token }), 404, 'NOT_FOUND')
      const restless = await server.user(undefined, 'mcp')
      assertEnvelope(await call('GET', '/v1/websites', '/v1/websites', { token: restless.token }), 403, 'TOKEN_NOT_ALLOWED')
    })
  })
}
