/**
 * The shape of src/, checked on every run: imports point down the layers (docs/architecture.md),
 * no folder grows past a fifth of the code, and test/ mirrors src/.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
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
  users: 'feature',
  auth: 'feature',
  websites: 'feature',
  content: 'feature',
  images: 'feature',
  uploads: 'feature',
  'site-content': 'feature',
  oauth: 'feature',
  domains: 'feature',
  mcp: 'surface',
  web: 'surface',
  'app.ts': 'composition',
  'compose.ts': 'composition',
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

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map((f) => path.join(dir, String(f)))
    .filter((f) => f.endsWith('.ts') && statSync(f).isFile())
}

/** The project files a file imports (type-only imports included: they couple layers too). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
  return info.importedFiles
    .map((i) => i.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.resolve(path.dirname(file), spec))
}

/** The imports of a file that point at a higher layer than its own. */
function upwardImports(file: string, targets: string[]): string[] {
  const from = layerOf(file)
  return targets
    .filter((target) => LAYERS.indexOf(layerOf(target)) > LAYERS.indexOf(from))
    .map((target) => `${path.relative(SRC, file)} (${from}) imports ${path.relative(SRC, target)} (${layerOf(target)})`)
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

const lines = (file: string): number => readFileSync(file, 'utf8').split('\n').length

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

  test('test/ mirrors src/: each test folder is named after a folder or entry file of src/', () => {
    const srcNames = new Set(readdirSync(SRC).map((name) => name.replace(/\.ts$/, '')))
    const testDirs = readdirSync(path.join(ROOT, 'test'), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'helpers')
    assert.deepEqual(
      testDirs.map((d) => d.name).filter((name) => !srcNames.has(name)),
      [],
    )
  })
})
