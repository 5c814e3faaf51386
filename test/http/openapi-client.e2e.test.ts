/**
 * The OpenAPI document makes a working typed client: types generated from the served document
 * with openapi-typescript (default options) let an openapi-fetch client call the API without a
 * single cast. The client script is typechecked with the TypeScript compiler and then run against
 * the real server; a document whose types would need a cast fails the typecheck.
 */

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { STORES } from '../helpers/stores.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

/**
 * What a client developer writes against the generated types: no `as`, no `any`, no
 * suppression comments. Each call's body and parameters are checked against the document.
 */
const CLIENT = `import createClient from 'openapi-fetch'
import type { paths } from './api.ts'

const client = createClient<paths>({ baseUrl: process.env.PLINTH_URL, headers: { authorization: \`Bearer \${process.env.PLINTH_TOKEN}\` } })

function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(\`\${result.response.status} \${JSON.stringify(result.error)}\`)
  return result.data
}

const page = '<!doctype html><html><head><title>Typed</title></head><body><h1>Typed</h1></body></html>'

const suggestion = ok(await client.GET('/v1/slugs/suggest', { params: { query: { value: 'Typed Client Café' } } }))

const created = ok(
  await client.POST('/v1/websites', {
    body: { name: 'Typed client', category: 'portfolio', slug: suggestion.suggestion, files: [{ path: 'index.html', content: page }] },
  }),
)
const websiteId: string = created.websiteId

const stored = ok(
  await client.POST('/v1/websites/{websiteId}/versions', {
    params: { path: { websiteId } },
    body: { files: [{ path: 'index.html', content: page.replace('<h1>Typed', '<h1>Typed v2') }], promote: false },
  }),
)

const before = ok(await client.GET('/v1/websites/{websiteId}', { params: { path: { websiteId } } }))

const promotion = ok(
  await client.POST('/v1/websites/{websiteId}/versions/{versionId}/promote', {
    params: { path: { websiteId, versionId: stored.jobId } },
  }),
)
// The same operation schedules a promote when given promoteAt (202, a Schedule): without it, the version.
if (!('isCurrent' in promotion)) throw new Error('a promote without promoteAt answers the version')
const promoted = promotion

const patched = ok(
  await client.POST('/v1/websites/{websiteId}/versions', {
    params: { path: { websiteId } },
    body: {
      baseVersion: promoted.version,
      changes: [
        { op: 'edit', path: 'index.html', edits: [{ oldText: '<h1>Typed v2', newText: '<h1>Typed v3' }] },
        { op: 'put', path: 'notes/read me.txt', content: 'one\\ntwo\\n' },
      ],
    },
  }),
)

const readBack = ok(
  await client.GET('/v1/websites/{websiteId}/versions/{versionId}/files/{path}', {
    params: { path: { websiteId, versionId: patched.jobId, path: 'notes/read me.txt' }, query: { offset: 2, limit: 1 } },
  }),
)

const compared = ok(await client.GET('/v1/websites/{websiteId}/versions/{a}/diff/{b}', { params: { path: { websiteId, a: stored.jobId, b: String(patched.version) } } }))

const collection = ok(
  await client.POST('/v1/websites/{websiteId}/collections', {
    params: { path: { websiteId } },
    body: {
      name: 'posts',
      label: 'Posts',
      fields: [
        { name: 'title', label: 'Title', type: 'text' },
        { name: 'body', label: 'Body', type: 'richText', required: true },
      ],
    },
  }),
)

const upserted = ok(
  await client.POST('/v1/websites/{websiteId}/collections/{collection}/entries/batch', {
    params: { path: { websiteId, collection: collection.name } },
    body: {
      entries: [
        { slug: 'hello', publishedAt: '2024-05-01T10:00:00Z', data: { title: 'Hello', body: { markdown: '# Hi' } } },
        { slug: 'second', data: { title: 'Second', body: { html: '<p>Two</p>' } } },
        { slug: 'broken', data: { title: 'No body' } },
      ],
    },
  }),
)

const all = ok(await client.GET('/v1/websites/{websiteId}/collections/{collection}/entries', { params: { path: { websiteId, collection: 'posts' } } }))
const first = ok(
  await client.GET('/v1/websites/{websiteId}/collections/{collection}/entries', { params: { path: { websiteId, collection: 'posts' }, query: { limit: 1 } } }),
)

const missing = await client.GET('/v1/websites/{websiteId}', { params: { path: { websiteId: 'web_missing' } } })

console.log(
  JSON.stringify({
    suggestion: { slug: suggestion.slug, valid: suggestion.valid, available: suggestion.available, suggestion: suggestion.suggestion },
    created: { slug: created.slug, version: created.version },
    stored: { version: stored.version, isCurrent: stored.isCurrent },
    liveBefore: before.currentVersion?.version ?? null,
    promoted: { version: promoted.version, isCurrent: promoted.isCurrent },
    patched: { version: patched.version, isCurrent: patched.isCurrent },
    readBack: { content: readBack.content, lines: readBack.lines ?? null },
    compared: compared.files.map((f) => \`\${f.path}:\${f.status}\`),
    collection: { name: collection.name, entryPath: collection.entryPath, required: collection.fields.map((f) => f.required ?? null) },
    results: upserted.results.map((r) => \`\${r.slug}:\${r.status}\${r.error ? \`:\${r.error.code}\` : ''}\`),
    counts: upserted.counts,
    entries: all.items.map((e) => e.slug),
    firstPage: { slugs: first.items.map((e) => e.slug), more: first.nextCursor !== null },
    missing: { status: missing.response.status, code: missing.error?.error.code ?? null },
  }),
)
`

/** Compiler diagnostics of the client script, as text; empty when it typechecks. */
function typecheck(dir: string): string {
  const program = ts.createProgram([path.join(dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    types: ['node'],
  })
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => dir,
    getNewLine: () => '\n',
  })
}

/** A folder for a client project, with the project's own installation (openapi-fetch, tsx, @types/node), holding the types of `document` and the client script. */
async function clientProject(document: unknown): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-openapi-client-'))
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  writeFileSync(path.join(dir, 'api.ts'), astToString(await openapiTS(document as Parameters<typeof openapiTS>[0])))
  writeFileSync(path.join(dir, 'client.ts'), CLIENT)
  return dir
}

// The document is the same whatever the store, so its types are checked once; the calls are made on each store.
describe('Types generated from the OpenAPI document', () => {
  let server: TestServer
  let document: Record<string, any>

  before(async () => {
    server = await startTestServer('sqlite')
    const res = await server.api('GET', '/openapi.json')
    assert.equal(res.status, 200, res.text)
    document = res.body
  })
  after(() => server?.close())

  test('let an openapi-fetch client script call the API without a cast: it typechecks', async () => {
    assert.doesNotMatch(CLIENT, /\bas\s+[A-Za-z{[(]|\bany\b|@ts-|<unknown>|!\./, 'the client script itself uses no cast, any or non-null assertion')
    const dir = await clientProject(document)
    try {
      assert.equal(typecheck(dir), '', 'the client script typechecks against the generated types')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a document whose types would need a cast fails the typecheck', async () => {
    // The same script against types of a batch whose items are untyped objects, as the
    // document once declared them: sending an entry then needs a cast.
    const loose = structuredClone(document)
    loose.components.schemas.EntryBatchRequest.properties.entries.items = { type: 'object' }
    const dir = await clientProject(loose)
    try {
      assert.match(typecheck(dir), /client\.ts\(\d+,\d+\): error TS\d+/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

for (const store of STORES) {
  describe(`A typed client generated from the OpenAPI document (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let dir: string

    before(async () => {
      server = await startTestServer(store.name)
      const res = await server.api('GET', '/openapi.json')
      assert.equal(res.status, 200, res.text)
      dir = await clientProject(res.body)
    })
    after(async () => {
      await server?.close()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    test('the client script, run on types generated from the served document, makes its calls and they work', async () => {
      const user = await server.user()
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(dir, 'client.ts')], {
        cwd: dir,
        env: { ...process.env, PLINTH_URL: server.url, PLINTH_TOKEN: user.token },
      })
      const out = JSON.parse(stdout.trim().split('\n').pop() ?? '')
      assert.deepEqual(out.suggestion, { slug: 'typed-client-cafe', valid: false, available: false, suggestion: 'typed-client-cafe' })
      assert.deepEqual(out.created, { slug: 'typed-client-cafe', version: 1 })
      assert.deepEqual(out.stored, { version: 2, isCurrent: false })
      assert.equal(out.liveBefore, 1, 'promote false left version 1 live')
      assert.deepEqual(out.promoted, { version: 2, isCurrent: true })
      assert.deepEqual(out.patched, { version: 3, isCurrent: true })
      assert.deepEqual(out.readBack, { content: 'two\n', lines: { from: 2, to: 2, total: 2 } }, 'a path with a slash and a space, read by lines')
      assert.deepEqual(out.compared, ['index.html:changed', 'notes/read me.txt:added'])
      assert.deepEqual(out.collection, { name: 'posts', entryPath: '/posts-{slug}', required: [false, true] }, 'required defaults to false')
      assert.deepEqual(out.results, ['hello:created', 'second:created', 'broken:failed:VALIDATION_FAILED'], 'a bad item fails alone')
      assert.deepEqual(out.counts, { created: 2, updated: 0, unchanged: 0, failed: 1 })
      assert.deepEqual(out.entries, ['second', 'hello'], 'newest publishedAt first')
      assert.deepEqual(out.firstPage, { slugs: ['second'], more: true }, 'limit is honoured; without it the default page holds both')
      assert.deepEqual(out.missing, { status: 404, code: 'NOT_FOUND' }, 'errors are typed as the envelope')
    })
  })
}
