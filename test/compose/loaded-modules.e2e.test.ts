/**
 * An instance on SQLite and the filesystem store loads neither the PostgreSQL driver nor the AWS
 * SDK, and `plinth --help` loads none of the service: each is loaded where a setting asks for it
 * (compose.ts, db/connect.ts). A started server has not loaded oidc-provider, jsdom, the MCP SDK
 * or playwright-core either, nor has `plinth user create`: they load on their first use (the OAuth
 * server, the rich-text threads, the first MCP request, the first screenshot). Checked on the
 * compiled Plinth that `npm start` runs (dist/), each time in a process of its own, which records
 * every package an import resolves to (a module hook) and every file `require` loaded.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { ensureBuilt } from '../helpers/build.ts'

const run = promisify(execFile)
const ROOT = path.resolve(import.meta.dirname, '../..')

/** The libraries the build bundles into dist/vendor/, with the name of each one's file there (without .js). */
const { VENDORED, vendorFileOf } = (await import(pathToFileURL(path.join(ROOT, 'scripts/vendor-bundle.js')).href)) as {
  VENDORED: string[]
  vendorFileOf: (name: string) => string
}
const vendoredFiles = VENDORED.map((name) => ({ name, file: vendorFileOf(name).slice(0, -'.js'.length) }))

/** Runs `body` (an async function's statements) in a new process; returns the packages it loaded, by name. */
async function packagesLoadedBy(body: string, env: NodeJS.ProcessEnv): Promise<Set<string>> {
  const script = `
    import { createRequire, register } from 'node:module'
    import { MessageChannel } from 'node:worker_threads'
    const { port1, port2 } = new MessageChannel()
    const resolved = []
    // The hook reports each resolution on the port, in order: once the last import's own report
    // arrives, every earlier one has.
    const LAST = 'data:text/javascript,export{}'
    const allReported = new Promise((resolve) => port1.on('message', (url) => (url === LAST ? resolve() : resolved.push(url))))
    const hook = 'let port; export function initialize(data) { port = data.port }' +
      ' export async function resolve(specifier, context, next) { const found = await next(specifier, context); port.postMessage(found.url); return found }'
    register('data:text/javascript,' + encodeURIComponent(hook), { data: { port: port2 }, transferList: [port2] })
    ${body}
    await import(LAST)
    await allReported
    port1.close()
    const required = Object.keys(createRequire(import.meta.url).cache).map((file) => 'file://' + file)
    console.log(JSON.stringify([...resolved, ...required]))`
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, ...env } })
  const urls = JSON.parse(stdout.trim().split('\n').at(-1)!) as string[]
  const names = urls.flatMap((url) => {
    const inPackage = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
    if (inPackage) return [inPackage[1]!]
    // A library the build bundled: dist/vendor/{its file}.js, or {its file}__{a path in it}.js.
    const bundled = /\/dist\/vendor\/([^/]+)\.js$/.exec(url)?.[1]
    if (bundled === undefined) return []
    // The longest match: @fastify/cookie's file is fastify__cookie, which also starts as fastify's.
    const library = vendoredFiles.filter(({ file }) => bundled === file || bundled.startsWith(`${file}__`)).sort((a, b) => b.file.length - a.file.length)[0]
    return library ? [library.name] : []
  })
  return new Set(names)
}

describe('modules a setting leaves unused are not loaded', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-loaded-'))
  before(ensureBuilt)
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  test('a composition on SQLite and the filesystem store loads neither pg nor the AWS SDK', async () => {
    const loaded = await packagesLoadedBy(
      `const { compose } = await import('./dist/compose.js')
       const { loadConfig } = await import('./dist/config.js')
       const { createLogger } = await import('./dist/log.js')
       const plinth = await compose(loadConfig(process.env), createLogger('silent', process.stderr), { sweepAtStart: false })
       await plinth.close()`,
      { PLINTH_DATA_DIR: dataDir, DATABASE_URL: '', PLINTH_BLOB_STORE: 'fs', PLINTH_S3_BUCKET: '' },
    )
    // What the composition does load is seen (the check sees both imports and require).
    assert.ok(loaded.has('kysely'), 'kysely, imported, is recorded')
    assert.ok(loaded.has('better-sqlite3') || loaded.has('better-sqlite3-napi'), 'the SQLite driver, required, is recorded')
    assert.deepEqual(
      [...loaded].filter((name) => name === 'pg' || name.startsWith('pg-') || name.startsWith('@aws-sdk/') || name.startsWith('@smithy/')),
      [],
    )
  })

  test('plinth --help loads nothing of the service', async () => {
    const loaded = await packagesLoadedBy(
      `const { run } = await import('./dist/cli/main.js')
       process.exitCode = await run(['--help'], { out: () => {}, err: () => {} })`,
      { PLINTH_DATA_DIR: dataDir },
    )
    assert.deepEqual(
      ['kysely', 'better-sqlite3', 'fastify', 'oidc-provider', 'pg', '@aws-sdk/client-s3'].filter((name) => loaded.has(name)),
      [],
    )
  })

  /** Packages that load on first use only, never at start. */
  const ON_FIRST_USE = ['oidc-provider', 'jsdom', '@modelcontextprotocol/server', 'undici', 'playwright-core']
  const serve = (then: string) => `
    const { startServer } = await import('./dist/server.js')
    const { loadConfig } = await import('./dist/config.js')
    const { createLogger } = await import('./dist/log.js')
    const server = await startServer(loadConfig(process.env), createLogger('silent', process.stderr))
    const index = await fetch(server.address + '/v1')
    if (index.status !== 200) throw new Error('GET /v1 answered ' + index.status)
    ${then}
    await server.close()`
  const serverEnv = { PLINTH_DATA_DIR: dataDir, DATABASE_URL: '', PLINTH_BLOB_STORE: 'fs', PORT: '0', HOST: '127.0.0.1' }

  test('a server started and answering GET /v1 has loaded neither oidc-provider nor jsdom nor the MCP SDK nor playwright-core', async () => {
    const loaded = await packagesLoadedBy(serve(''), serverEnv)
    assert.ok(loaded.has('fastify'), 'fastify, imported, is recorded')
    assert.deepEqual(
      ON_FIRST_USE.filter((name) => loaded.has(name)),
      [],
    )
  })

  test('the first request to the OAuth authorization server loads oidc-provider', async () => {
    const loaded = await packagesLoadedBy(
      serve(`const metadata = await fetch(server.address + '/.well-known/oauth-authorization-server')
             if (metadata.status !== 200) throw new Error('the OAuth metadata answered ' + metadata.status)`),
      serverEnv,
    )
    assert.ok(loaded.has('oidc-provider'))
  })

  test('plinth user create loads neither oidc-provider nor jsdom nor the MCP SDK', async () => {
    const loaded = await packagesLoadedBy(
      `const { run } = await import('./dist/cli/main.js')
       const lines = []
       const code = await run(['user', 'create', '--email', 'loaded@example.com', '--password', 'long enough'], { out: (line) => lines.push(line), err: console.error })
       if (code !== 0 || !/^usr_/.test(lines.at(-1))) throw new Error('user create failed: ' + lines.join(' '))`,
      { PLINTH_DATA_DIR: dataDir, DATABASE_URL: '' },
    )
    assert.ok(loaded.has('kysely'), 'the command used the database')
    assert.deepEqual(
      [...ON_FIRST_USE, 'fastify'].filter((name) => loaded.has(name)),
      [],
    )
  })
})
