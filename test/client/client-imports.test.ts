/**
 * The client commands run on machines that have no Plinth instance: everything `plinth deploy`
 * imports, followed through every relative import, stays out of the server's code (no database,
 * no blob store, no feature, no HTTP server) and out of the packages only a server needs.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { ImportType, init, parse } from 'es-module-lexer'

const SRC = path.resolve(import.meta.dirname, '../../src')
const SERVER_FOLDERS = [
  'db',
  'blobs',
  'serving',
  'ops',
  'http',
  'users',
  'auth',
  'websites',
  'drafts',
  'content',
  'site-content',
  'oauth',
  'uploads',
  'images',
  'domains',
  'mcp',
  'web',
  'cli',
]
const SERVER_PACKAGES = ['fastify', 'kysely', 'pg', 'better-sqlite3', '@aws-sdk/client-s3', 'oidc-provider', 'jsdom', 'pino', '@modelcontextprotocol/server']

/** The file an import names: `x.js` stands for `x.ts`, unless x.js is itself the source (plain JavaScript shared with the browser). */
const sourceOf = (file: string): string => (file.endsWith('.js') && existsSync(file) ? file : file.replace(/\.js$/, '.ts'))

/** Every file of src/ that `entry` imports, directly or not, and every package named on the way. */
async function importGraph(entry: string): Promise<{ files: Set<string>; packages: Set<string> }> {
  await init
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    const source = readFileSync(file, 'utf8')
    const [imports] = parse(source)
    for (const { n: specifier, t: kind, ss: start } of imports) {
      // Type-only imports are erased from the JavaScript that runs.
      if (specifier === undefined || kind === ImportType.ImportMeta || /^(import|export) type\b/.test(source.slice(start))) continue
      if (specifier.startsWith('.')) visit(sourceOf(path.resolve(path.dirname(file), specifier)))
      else if (!specifier.startsWith('node:')) packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!)
    }
  }
  visit(entry)
  return { files, packages }
}

test('plinth deploy imports no server code and no server-only package', async () => {
  const { files, packages } = await importGraph(path.join(SRC, 'client', 'main.ts'))
  assert.ok(files.has(path.join(SRC, 'publishing', 'authoring-rules.ts')), 'the authoring rules are checked before sending')
  const serverFiles = [...files]
    .map((file) => path.relative(SRC, file))
    .filter((file) => SERVER_FOLDERS.includes(file.split(path.sep)[0]!) || !file.includes(path.sep))
  assert.deepEqual(serverFiles, [])
  assert.deepEqual(
    [...packages].filter((name) => SERVER_PACKAGES.includes(name)),
    [],
  )
})
