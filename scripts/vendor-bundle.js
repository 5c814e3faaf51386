// Bundles the libraries a server start loads into a few files of dist/vendor/, and points the
// compiled modules' imports at them.
//
// Node loads an ES module library file by file: Kysely alone is some 280 files, each resolved,
// read, parsed and linked before the first request can be answered. One bundled file of the same
// code loads in a tenth of the time. Only libraries on VENDORED are bundled: each is plain
// JavaScript that keeps no file of its own to read beside its code. The rest (native addons,
// libraries that start threads from a file path, and the heavy ones loaded only when a feature
// is used) are imported from node_modules as before.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

/** Packages bundled into dist/vendor/: every import of them or of a path inside them is rewritten. */
export const VENDORED = [
  '@fastify/cookie',
  '@fastify/csrf-protection',
  '@fastify/formbody',
  '@fastify/multipart',
  '@fastify/proxy-addr',
  '@fastify/swagger',
  '@fisker/parse-srcset',
  '@modelcontextprotocol/server',
  '@sindresorhus/transliterate',
  'busboy',
  'cookie',
  'css-tree',
  'fastify',
  'ignore',
  'ipaddr.js',
  'kysely',
  'liquidjs',
  'lru-cache',
  'markdown-it',
  'mime-types',
  'negotiator',
  'parse5',
  'prom-client',
  'secure-json-parse',
  'typebox',
]

/** Libraries the bundled ones import that stay in node_modules (threads from file paths, native code). */
const KEPT_OUTSIDE = ['pino', 'thread-stream', 'piscina', 'better-sqlite3', 'pg', 'pg-native']

/** The package a bare specifier names: `@scope/name` or `name`. */
function packageOf(specifier) {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/** Every compiled module's path under `dir`. */
function modulesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name))
}

/** The vendor file name of a specifier: `@fastify/cookie` -> `fastify__cookie.js`. */
export function vendorFileOf(specifier) {
  return `${specifier.replace(/^@/, '').replace(/[^A-Za-z0-9._-]/g, '__')}.js`
}

/**
 * Bundles the vendored libraries the modules under `out` import into `out/vendor/`, and rewrites
 * those imports to relative paths. `root` is the project (where node_modules is).
 */
export async function bundleVendored(root, out) {
  const require = createRequire(path.join(root, 'package.json'))
  const esbuild = require('esbuild')
  const { init, parse } = await import(pathToFileURL(require.resolve('es-module-lexer')).href)
  await init

  const modules = modulesUnder(out).map((file) => {
    const source = readFileSync(file, 'utf8')
    const [imports] = parse(source, file)
    return { file, source, imports: imports.filter((entry) => entry.n && VENDORED.includes(packageOf(entry.n))) }
  })
  const specifiers = [...new Set(modules.flatMap((module) => module.imports.map((entry) => entry.n)))].sort()
  if (specifiers.length === 0) return

  // Each specifier's entry re-exports by name what the library exports, so named imports of a
  // CommonJS library (which `export *` cannot carry into an ES module bundle) keep working.
  const entryDir = path.join(out, 'vendor.entries')
  mkdirSync(entryDir, { recursive: true })
  const entryPoints = {}
  for (const specifier of specifiers) {
    // Resolved from scripts/, inside the project, with the same conditions as the server's import.
    const names = Object.keys(await import(specifier)).filter((name) => name !== '__esModule' && /^[A-Za-z_$][\w$]*$/.test(name))
    const entry = path.join(entryDir, vendorFileOf(specifier))
    writeFileSync(entry, `export { ${names.join(', ')} } from ${JSON.stringify(specifier)}\n`)
    entryPoints[vendorFileOf(specifier).slice(0, -3)] = entry
  }
  await esbuild.build({
    entryPoints,
    outdir: path.join(out, 'vendor'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    nodePaths: [path.join(root, 'node_modules')],
    external: KEPT_OUTSIDE.flatMap((name) => [name, `${name}/*`]),
    // CommonJS code bundled into an ES module still calls require() and reads __dirname.
    banner: {
      js: [
        "import { createRequire as __vendorRequire } from 'node:module'",
        "import { fileURLToPath as __vendorPath } from 'node:url'",
        'const require = __vendorRequire(import.meta.url)',
        'const __filename = __vendorPath(import.meta.url)',
        'const __dirname = __vendorPath(new URL(".", import.meta.url))',
      ].join('\n'),
    },
    logLevel: 'warning',
    legalComments: 'none',
  })
  rmSync(entryDir, { recursive: true, force: true })

  for (const { file, source, imports } of modules) {
    if (imports.length === 0) continue
    let rewritten = ''
    let at = 0
    for (const entry of imports) {
      const target = path
        .relative(path.dirname(file), path.join(out, 'vendor', vendorFileOf(entry.n)))
        .split(path.sep)
        .join('/')
      rewritten += source.slice(at, entry.s) + source.slice(entry.s, entry.e).replace(entry.n, target.startsWith('.') ? target : `./${target}`)
      at = entry.e
    }
    writeFileSync(file, rewritten + source.slice(at))
  }
}
