/**
 * The OpenAPI document makes a working typed client: types generated from the served document
 * with openapi-typescript (default options) let an openapi-fetch client call the API without a
 * single cast. The client script is typechecked with the TypeScript compiler and then run against
 * the real server; a document whose types would need a cast fails the typecheck.
 */

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
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

for (const store of STORES) {
  describe(`A typed client generated from the OpenAPI document (${store.name})`, { skip: store.skip }, () => {
    let server: TestServer
    let dir: string

    before(async () => {
      server = await startTestServer(store.name)
      dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-openapi-client-'))
      // Packages (openapi-fetch, tsx, @types/node) resolve from the project's own installation.
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
    })
    after(async () => {
      await server?.close()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    test('openapi-typescript types let openapi-fetch call the API without a cast, and the calls work', async () => {
      const res = await server.api('GET', '/openapi.json')
      assert.equal(res.status, 200, res.text)
      const types = astToString(await openapiTS(res.body))
      writeFileSync(path.join(dir, 'api.ts'), types)
      writeFileSync(path.join(dir, 'client.ts'), CLIENT)
      assert.doesNotMatch(CLIENT, /\bas\s+[A-Za-z{[(]|\bany\b|@ts-|<unknown>|!\./, 'the client script itself uses no cast, any or non-null assertion')

      assert.equal(typecheck(dir), '', 'the client script typechecks against the generated types')

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

    test('a document whose types would need a cast fails the typecheck', async () => {
      // The same script against types of a batch whose items are untyped objects, as the
      // document once declared them: sending an entry then needs a cast.
      const res = await server.api('GET', '/openapi.json')
      const loose = structuredClone(res.body)
      loose.components.schemas.EntryBatchRequest.properties.entries.items = { type: 'object' }
      const check = mkdtempSync(path.join(os.tmpdir(), 'plinth-openapi-client-'))
      try {
        symlinkSync(path.join(ROOT, 'node_modules'), path.join(check, 'node_modules'), 'dir')
        writeFileSync(path.join(check, 'package.json'), readFileSync(path.join(dir, 'package.json')))
        writeFileSync(path.join(check, 'api.ts'), astToString(await openapiTS(loose)))
        writeFileSync(path.join(check, 'client.ts'), CLIENT)
        assert.match(typecheck(check), /client\.ts\(\d+,\d+\): error TS\d+/)
      } finally {
        rmSync(check, { recursive: true, force: true })
      }
    })
  })
}
