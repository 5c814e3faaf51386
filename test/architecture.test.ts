/**
 * The shape of src/, checked on every run: imports point down the layers (docs/architecture.md),
 * no folder grows past a fifth of the code, no source file past MAX_FILE_LINES lines, and test/
 * mirrors src/.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, test } from 'node:test'
import ts from 'typescript'

const ROOT = path.resolve(import.meta.dirname, '..')
const SRC = path.join(ROOT, 'src')

/** Layers, lowest first. A file may import files of its own layer or a lower one, never a higher one. */
const LAYERS = ['infrastructure', 'engine', 'feature', 'surface', 'composition', 'start-up'] as const
type Layer = (typeof LAYERS)[number]

/** The layer of each top-level entry of src/. */
const LAYER_OF: Record<string, Layer> = {
  'config.ts': 'infrastructure',
  'log.ts': 'infrastructure',
  core: 'infrastructure',
  db: 'infrastructure',
  blobs: 'infrastructure',
  net: 'infrastructure',
  http: 'infrastructure',
  ops: 'infrastructure',
  publishing: 'engine',
  serving: 'engine',
  editing: 'engine',
  vendoring: 'engine',
  'site-check': 'engine',
  users: 'feature',
  auth: 'feature',
  websites: 'feature',
  content: 'feature',
  images: 'feature',
  uploads: 'feature',
  'site-content': 'feature',
  oauth: 'feature',
  domains: 'feature',
  drafts: 'feature',
  browser: 'feature',
  forms: 'feature',
  webhooks: 'feature',
  approvals: 'feature',
  traffic: 'feature',
  mcp: 'surface',
  web: 'surface',
  client: 'surface',
  'app.ts': 'composition',
  'compose.ts': 'composition',
  'services.ts': 'composition',
  'worker-pools.ts': 'composition',
  'main.ts': 'start-up',
  'server.ts': 'start-up',
  cli: 'start-up',
}

/** REST routes and MCP tools live beside their feature but are surfaces. */
const SURFACE_FILE = /\.(routes|tools)\.ts$/

function layerOf(file: string): Layer {
  const relative = path.relative(SRC, file)
  if (SURFACE_FILE.test(relative)) return 'surface'
  const top = relative.split(path.sep)[0]!
  const layer = LAYER_OF[top]
  if (!layer) throw new Error(`src/${top} has no layer: add it to LAYER_OF here and to docs/architecture.md`)
  return layer
}

/** Modules of src/, in every folder: TypeScript, and the JavaScript a worker thread starts from. */
const SOURCE_FILE = /\.(ts|js)$/

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map((f) => path.join(dir, String(f)))
    .filter((f) => SOURCE_FILE.test(f) && statSync(f).isFile())
    .sort()
}

const isFile = (file: string): boolean => existsSync(file) && statSync(file).isFile()

/**
 * The file a relative import names, as TypeScript resolves it: `x.js` stands for `x.ts`, `x` for
 * `x.ts` or `x/index.ts`. When none exists the path itself is kept (`.js` read as `.ts`), so the
 * layer it points into is still known.
 */
function resolveImport(from: string, specifier: string, exists: (file: string) => boolean): string {
  const target = path.resolve(path.dirname(from), specifier)
  const asTypeScript = target.replace(/\.js$/, '.ts')
  const candidates = [asTypeScript, target, `${target}.ts`, `${target}.js`, path.join(target, 'index.ts'), path.join(target, 'index.js')]
  return candidates.find(exists) ?? asTypeScript
}

/**
 * The project files a module imports: static imports and re-exports, type-only ones (they couple
 * layers too), `import()` and `typeof import()`, and `require()`.
 */
function importsIn(file: string, source: string, exists: (file: string) => boolean): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolveImport(file, specifier, exists))
}

const importsOf = (file: string): string[] => importsIn(file, readFileSync(file, 'utf8'), isFile)

/** The imports of a file that point at a higher layer than its own, or out of src/ altogether. */
function upwardImports(file: string, targets: string[]): string[] {
  const from = layerOf(file)
  return targets.flatMap((target) => {
    const relative = path.relative(SRC, target)
    if (relative.startsWith('..')) return [`${path.relative(SRC, file)} (${from}) imports ${path.relative(ROOT, target)}, outside src/`]
    const to = layerOf(target)
    return LAYERS.indexOf(to) > LAYERS.indexOf(from) ? [`${path.relative(SRC, file)} (${from}) imports ${relative} (${to})`] : []
  })
}

/** Features that sit under the others: accounts are what sign-in, tokens and sites build on, so they import no other feature. */
const BASE_FEATURES = ['users']

/** The imports of a base feature's file that reach another feature. */
function featureImportsOfBase(file: string, targets: string[]): string[] {
  const top = (f: string) => path.relative(SRC, f).split(path.sep)[0]!
  if (!BASE_FEATURES.includes(top(file)) || layerOf(file) !== 'feature') return []
  return targets
    .filter((target) => layerOf(target) === 'feature' && top(target) !== top(file))
    .map((target) => `${path.relative(SRC, file)} imports ${path.relative(SRC, target)}`)
}

/** Lines of a text as `wc -l` counts them, a last line without its newline included. */
const lineCount = (text: string): number => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0))
const lines = (file: string): number => lineCount(readFileSync(file, 'utf8'))

/** A source file longer than this holds more than one job: split it by job. */
const MAX_FILE_LINES = 400

/** The files over MAX_FILE_LINES, each with its count. */
function overLineLimit(counted: ReadonlyArray<readonly [file: string, lines: number]>): string[] {
  return counted.filter(([, n]) => n > MAX_FILE_LINES).map(([file, n]) => `src/${path.relative(SRC, file)}: ${n} lines`)
}

describe('architecture', () => {
  const files = sourceFiles(SRC)

  test('every file of src/ belongs to a layer', () => {
    for (const file of files) assert.ok(LAYERS.includes(layerOf(file)))
  })

  test('imports point down the layers, never up', () => {
    assert.deepEqual(
      files.flatMap((file) => upwardImports(file, importsOf(file))),
      [],
    )
  })

  test('the layer check reports an upward import', () => {
    const at = (file: string) => path.join(SRC, file)
    assert.deepEqual(upwardImports(at('publishing/publish-pipeline.ts'), [at('websites/websites.repository.ts'), at('blobs/blob-store.ts')]), [
      'publishing/publish-pipeline.ts (engine) imports websites/websites.repository.ts (feature)',
    ])
    assert.deepEqual(upwardImports(at('content/entries.service.ts'), [at('mcp/tool-definition.ts'), at('compose.ts')]).length, 2)
    assert.deepEqual(upwardImports(at('content/content.tools.ts'), [at('mcp/tool-definition.ts'), at('content/entries.service.ts')]), [])
    assert.deepEqual(upwardImports(at('core/errors.ts'), [path.join(ROOT, 'test/helpers/server.ts')]), [
      'core/errors.ts (infrastructure) imports test/helpers/server.ts, outside src/',
    ])
  })

  test('the import reader finds every form of a relative import, resolved to its file', () => {
    const at = (file: string) => path.join(SRC, file)
    const existing = new Set(
      ['websites/websites.repository.ts', 'websites/websites.routes.ts', 'web/index.ts', 'compose.ts', 'mcp/mcp.server.ts', 'cli/main.ts'].map(at),
    )
    const source = [
      "import { WebsitesRepository } from '../websites/websites.repository.ts'",
      "import type { Routes } from '../websites/websites.routes.js'",
      "export * from '../web'",
      "const { compose } = await import('../compose.js')",
      "type Server = typeof import('../mcp/mcp.server')",
      "const cli = require('../cli/main.js')",
      "import { readFile } from 'node:fs'",
      "import { Kysely } from 'kysely'",
    ].join('\n')
    const file = at('publishing/publish-pipeline.ts')
    const targets = importsIn(file, source, (f) => existing.has(f))
    assert.deepEqual(
      targets.map((target) => path.relative(SRC, target)),
      ['websites/websites.repository.ts', 'websites/websites.routes.ts', 'web/index.ts', 'compose.ts', 'mcp/mcp.server.ts', 'cli/main.ts'],
    )
    assert.deepEqual(
      upwardImports(file, targets).map((found) => found.split(' imports ')[1]),
      [
        'websites/websites.repository.ts (feature)',
        'websites/websites.routes.ts (surface)',
        'web/index.ts (surface)',
        'compose.ts (composition)',
        'mcp/mcp.server.ts (surface)',
        'cli/main.ts (start-up)',
      ],
    )
    // A file that is not there is still placed in its layer: `.js` is read as its `.ts` source.
    assert.deepEqual(
      importsIn(file, "import('../web/dashboard.routes.js')", () => false),
      [at('web/dashboard.routes.ts')],
    )
  })

  test('users/ imports no other feature', () => {
    assert.deepEqual(
      files.flatMap((file) => featureImportsOfBase(file, importsOf(file))),
      [],
    )
    const at = (file: string) => path.join(SRC, file)
    assert.deepEqual(featureImportsOfBase(at('users/users.service.ts'), [at('auth/accounts.service.ts'), at('core/passwords.ts')]), [
      'users/users.service.ts imports auth/accounts.service.ts',
    ])
  })

  test('no folder of src/ holds more than a fifth of its lines', () => {
    const total = files.reduce((sum, f) => sum + lines(f), 0)
    const byFolder = new Map<string, number>()
    for (const file of files) {
      const parts = path.relative(SRC, file).split(path.sep)
      for (let depth = 1; depth < parts.length; depth++) {
        const folder = parts.slice(0, depth).join('/')
        byFolder.set(folder, (byFolder.get(folder) ?? 0) + lines(file))
      }
    }
    const large = [...byFolder].filter(([, n]) => n > total / 5).map(([folder, n]) => `src/${folder}: ${n} of ${total} lines`)
    assert.deepEqual(large, [])
  })

  test(`no source file of src/ is over ${MAX_FILE_LINES} lines`, () => {
    assert.deepEqual(overLineLimit(files.map((file) => [file, lines(file)])), [])
  })

  test('the line check lists each long file with its count', () => {
    assert.deepEqual([lineCount(''), lineCount('a'), lineCount('a\n'), lineCount('a\nb'), lineCount('a\n\nb\n')], [0, 1, 1, 2, 3])
    const at = (file: string) => path.join(SRC, file)
    assert.deepEqual(
      overLineLimit([
        [at('a.ts'), MAX_FILE_LINES + 1],
        [at('b/c.ts'), MAX_FILE_LINES],
        [at('d/e.ts'), 1200],
      ]),
      [`src/a.ts: ${MAX_FILE_LINES + 1} lines`, 'src/d/e.ts: 1200 lines'],
    )
  })

  test('test/ mirrors src/: each test folder is named after a folder or entry file of src/, or is scripts/', () => {
    // test/scripts/ holds the tests of the repository's own scripts/ (the build, the test runner).
    const srcNames = new Set([...readdirSync(SRC).map((name) => name.replace(/\.ts$/, '')), 'scripts'])
    const testDirs = readdirSync(path.join(ROOT, 'test'), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'helpers')
    assert.deepEqual(
      testDirs.map((d) => d.name).filter((name) => !srcNames.has(name)),
      [],
    )
  })
})
