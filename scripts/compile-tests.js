// Compiles src/ and test/ to JavaScript for scripts/run-tests.js, so test processes run without a
// TypeScript loader: Node 20 runs a loader's hooks on a thread of their own, with a round trip for
// every module imported, and through tsx that was a large part of a test process's CPU.
//
// esbuild transforms each file on its own, as tsx would when the test imports it (tsconfig.json
// makes every file compile alone: isolatedModules, verbatimModuleSyntax). The compiled tree sits
// in node_modules/.cache/plinth-tests/, a folder per checkout, with the layout of the project:
// relative imports are rewritten from `.ts` to `.js`, and every other file of src/ (views, assets,
// the threads' entry) is copied beside the modules, as scripts/build.js does for dist/. A symbolic
// link to docs/ makes the guide pages src/web/docs.ts reads reachable from there too.
//
// A compiled test file keeps the import.meta of its source (url, filename, dirname): the files it
// reads and the processes it starts are found from test/ as with tsx. Source maps point back at
// the sources, so a stack trace (node --enable-source-maps) names the TypeScript lines.
//
// Only files whose bytes changed are compiled again (the hashes are kept in manifest.json); a
// compiled file whose source is gone is removed.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { transform } from 'esbuild'
import { init as initLexer, parse as parseImports } from 'es-module-lexer'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
/** The folders compiled; test/ files keep their source's import.meta. */
const FOLDERS = ['src', 'test']
/** Compiler options esbuild reads, as tsconfig.json sets them. */
const TSCONFIG = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'))

/** What the compiled tree depends on besides the sources: a change of any compiles everything again. */
function compilerKey() {
  const hash = createHash('sha256')
  hash.update(readFileSync(fileURLToPath(import.meta.url)))
  hash.update(createRequire(import.meta.url)('esbuild/package.json').version)
  hash.update(JSON.stringify(TSCONFIG.compilerOptions))
  hash.update(ROOT)
  return hash.digest('hex')
}

/** Where the compiled tree of this checkout lives. */
export function compiledRoot() {
  const id = createHash('sha256').update(realpathSync(ROOT)).digest('hex').slice(0, 12)
  return path.join(ROOT, 'node_modules', '.cache', 'plinth-tests', id)
}

const hashOf = (bytes) => createHash('sha256').update(bytes).digest('hex')

/** Writes `bytes` to `file` whole (a process reading it never sees half). */
function writeWhole(file, bytes) {
  mkdirSync(path.dirname(file), { recursive: true })
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, bytes)
  renameSync(temp, file)
}

/** `code` with every relative import of a `.ts` file importing its `.js` twin. */
function rewriteImports(code) {
  let out = ''
  let last = 0
  for (const { n: specifier, s, e } of parseImports(code)[0]) {
    if (specifier === undefined || !/^\.\.?\//.test(specifier) || !specifier.endsWith('.ts')) continue
    const text = code.slice(s, e)
    const at = text.lastIndexOf('.ts')
    out += code.slice(last, s + at) + '.js'
    last = s + at + '.ts'.length
  }
  return out + code.slice(last)
}

async function compile(source, relative) {
  const sourceUrl = pathToFileURL(source).href
  const define =
    relative.split(path.sep)[0] === 'test'
      ? {
          'import.meta.url': JSON.stringify(sourceUrl),
          'import.meta.filename': JSON.stringify(source),
          'import.meta.dirname': JSON.stringify(path.dirname(source)),
        }
      : {}
  const { code } = await transform(readFileSync(source, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: false,
    sourcefile: sourceUrl,
    tsconfigRaw: { compilerOptions: TSCONFIG.compilerOptions },
    define,
  })
  return rewriteImports(code)
}

/** Every file of the compiled folders, relative to ROOT. */
function sourceFiles() {
  return FOLDERS.flatMap((folder) =>
    readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && !entry.name.endsWith('.d.ts'))
      .map((entry) => path.relative(ROOT, path.join(entry.parentPath ?? entry.path, entry.name))),
  )
}

const outputOf = (relative) => (relative.endsWith('.ts') ? `${relative.slice(0, -'.ts'.length)}.js` : relative)

/** Makes the compiled tree current; returns its root. */
export async function compileTests() {
  const out = compiledRoot()
  const manifestFile = path.join(out, 'manifest.json')
  const key = compilerKey()
  let manifest = { key, files: {} }
  try {
    const read = JSON.parse(readFileSync(manifestFile, 'utf8'))
    if (read.key === key) manifest = read
  } catch {
    // none yet, or unreadable: everything is compiled
  }
  await initLexer
  const files = {}
  await Promise.all(
    sourceFiles().map(async (relative) => {
      const bytes = readFileSync(path.join(ROOT, relative))
      const hash = hashOf(bytes)
      files[relative] = hash
      const target = path.join(out, outputOf(relative))
      if (manifest.files[relative] === hash && existsSync(target)) return
      writeWhole(target, relative.endsWith('.ts') ? await compile(path.join(ROOT, relative), relative) : bytes)
    }),
  )
  const kept = new Set(Object.keys(files).map(outputOf))
  for (const relative of Object.keys(manifest.files)) {
    if (!kept.has(outputOf(relative))) rmSync(path.join(out, outputOf(relative)), { force: true })
  }
  try {
    symlinkSync(path.join(ROOT, 'docs'), path.join(out, 'docs'), 'dir')
  } catch (error) {
    if (error.code !== 'EEXIST') throw error
  }
  writeWhole(manifestFile, `${JSON.stringify({ key, files })}\n`)
  return out
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(await compileTests())
}
