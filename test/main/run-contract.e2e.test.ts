/**
 * The run contract as others use it: `npm start` with settings from the environment, data under
 * PLINTH_DATA_DIR, a clean exit on SIGTERM, and a clear refusal of bad settings; and what it
 * runs: the compiled JavaScript of dist/, with no TypeScript loader.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { ensureBuilt, ROOT } from '../helpers/build.ts'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function start(env: Record<string, string>) {
  const child = spawn(npm, ['start', '--silent'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', PLINTH_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (c) => (output += c))
  child.stderr.on('data', (c) => (output += c))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  /** Resolves with the address from the start-up log line. */
  const listening = new Promise<string>((resolve, reject) => {
    const onData = () => {
      const address = /Plinth is serving on (http:\/\/[^"\s]+)/.exec(output)?.[1]
      if (address !== undefined) resolve(address)
    }
    child.stdout.on('data', onData)
    void exited.then((code) => reject(new Error(`exited with ${code} before listening:\n${output}`)))
  })
  return { child, exited, listening, output: () => output }
}

/**
 * A module hook for every process of an `npm start` (given through NODE_OPTIONS, so no command
 * line changes): each module URL a process resolves is written to `file` as `pid url`.
 */
function moduleProbe(dir: string): { env: Record<string, string>; modulesOf(pid: number): string[] } {
  const file = path.join(dir, 'modules.txt')
  const hooks = path.join(dir, 'hooks.mjs')
  const probe = path.join(dir, 'probe.mjs')
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs'
     export async function resolve(specifier, context, next) {
       const found = await next(specifier, context)
       appendFileSync(${JSON.stringify(file)}, process.pid + ' ' + found.url + '\\n')
       return found
     }`,
  )
  writeFileSync(probe, `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)
  writeFileSync(file, '')
  return {
    env: { NODE_OPTIONS: `--import=${probe}` },
    modulesOf: (pid) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(`${pid} `))
        .map((line) => line.slice(line.indexOf(' ') + 1)),
  }
}

describe('npm start', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-run-'))
  // Built first, as `npm install` does: then no test's start builds.
  before(() => ensureBuilt())
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  test('runs the compiled server with no TypeScript loader, and it answers GET /v1', async () => {
    const probeDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-run-probe-'))
    const probe = moduleProbe(probeDir)
    const server = start({ PORT: '0', HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir, ...probe.env })
    try {
      const address = await server.listening
      const index = await (await fetch(`${address}/v1`)).json()
      assert.equal(index.name, 'Plinth')
      // The server's own process (the start line carries its pid), not npm's.
      const pid = Number(/"pid":(\d+)[^\n]*Plinth is serving/.exec(server.output())?.[1])
      assert.ok(pid > 0, server.output())
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
      assert.deepEqual(commandLine.slice(1), [path.join('dist', 'main.js')], `the server runs as: ${commandLine.join(' ')}`)

      const modules = probe.modulesOf(pid)
      const own = modules.filter((url) => url.startsWith(pathToFileURL(ROOT).href) && !url.includes('/node_modules/'))
      assert.ok(own.includes(pathToFileURL(path.join(ROOT, 'dist/main.js')).href), 'the probe saw the server load dist/main.js')
      assert.ok(
        modules.some((url) => url.includes('/node_modules/pino/')),
        'the probe saw packages load',
      )
      assert.deepEqual(
        modules.filter((url) => /\/node_modules\/(?:fastify|kysely|typebox)\//.test(url)),
        [],
        'the libraries every start loads come bundled from dist/vendor/',
      )
      assert.ok(own.includes(pathToFileURL(path.join(ROOT, 'dist/vendor/kysely.js')).href), 'Kysely loads from dist/vendor/')
      assert.deepEqual(
        own.filter((url) => !url.startsWith(pathToFileURL(path.join(ROOT, 'dist')).href + '/')),
        [],
        'every module of Plinth comes from dist/',
      )
      assert.deepEqual(
        modules.filter((url) => /\/node_modules\/(?:tsx|esbuild|typescript)\//.test(url) || /\.[cm]?ts$/.test(url)),
        [],
        'no TypeScript loader and no TypeScript module',
      )
      assert.deepEqual(
        modules.filter((url) => /\/node_modules\/(?:oidc-provider|jsdom)\//.test(url)),
        [],
        'oidc-provider and jsdom wait until they are used',
      )
      server.child.kill('SIGTERM')
      assert.equal(await server.exited, 0)
    } finally {
      server.child.kill('SIGKILL')
      rmSync(probeDir, { recursive: true, force: true })
    }
  })

  test('serves on PORT at HOST with data under PLINTH_DATA_DIR, and stops cleanly on SIGTERM', async () => {
    const server = start({
      PORT: '0',
      HOST: '127.0.0.1',
      PLINTH_DATA_DIR: dataDir,
      PLINTH_BASE_URL: 'http://api.example.test',
      PLINTH_SITE_DOMAIN: 'sites.example.test',
    })
    try {
      const address = await server.listening
      assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/)
      const index = await (await fetch(`${address}/v1`)).json()
      assert.equal(index.openapi, 'http://api.example.test/openapi.json')
      assert.equal(index.mcp, 'http://api.example.test/mcp')
      assert.ok(existsSync(path.join(dataDir, 'plinth.sqlite')), 'the SQLite database lives in PLINTH_DATA_DIR')

      server.child.kill('SIGTERM')
      assert.equal(await server.exited, 0)
      assert.match(server.output(), /SIGTERM received/)
    } finally {
      server.child.kill('SIGKILL')
    }
  })

  test('refuses bad settings with a message naming them and a non-zero exit', async () => {
    const server = start({
      PORT: 'eighty',
      PLINTH_DATA_DIR: dataDir,
      PLINTH_PUBLISH_RATE_PER_MINUTE: '-1',
      PLINTH_MAX_FILES: '0',
      PLINTH_MAX_BUNDLE_BYTES: '1GB',
    })
    const code = await server.exited
    assert.notEqual(code, 0)
    assert.match(server.output(), /PORT must be a whole number/)
    assert.match(server.output(), /PLINTH_PUBLISH_RATE_PER_MINUTE must be a whole number/)
    assert.match(server.output(), /PLINTH_MAX_FILES must be a whole number from 1 to 1000, got \\?"0\\?"/)
    assert.match(server.output(), /PLINTH_MAX_BUNDLE_BYTES must be a whole number/)
    server.listening.catch(() => {})
  })

  test('without a terminal every line of output is JSON, for log collectors', async () => {
    const server = start({ PORT: '0', HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir })
    try {
      await server.listening
      server.child.kill('SIGTERM')
      assert.equal(await server.exited, 0)
      const lines = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{') || line.includes('Plinth'))
      assert.ok(lines.length >= 2, server.output())
      for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line)
    } finally {
      server.child.kill('SIGKILL')
    }
  })

  test('a port already in use is one clear line, not a stack trace', async () => {
    const first = start({ PORT: '0', HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir })
    try {
      const port = new URL(await first.listening).port
      const second = start({ PORT: port, HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir })
      assert.notEqual(await second.exited, 0)
      const said = second
        .output()
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.startsWith('npm warn') && !line.startsWith('{'))
      assert.deepEqual(said, [`Port ${port} on 127.0.0.1 is already in use: stop the other server or set PORT to a free port.`])
      second.listening.catch(() => {})
    } finally {
      // SIGTERM reaches the server through npm; a SIGKILL would kill npm alone and leave it running.
      first.child.kill('SIGTERM')
      await first.exited
    }
  })

  test(
    'in a terminal it prints a banner with the URLs and the next command to run',
    { skip: hasScript() ? false : 'the script command (util-linux) is not installed' },
    async () => {
      // script(1) gives npm start a pseudo-terminal, as a person's shell would.
      const env = { ...process.env, DATABASE_URL: '', PORT: '0', HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir, PLINTH_BASE_URL: 'http://localhost:9999' }
      const child = spawn('script', ['-qfec', `${npm} start --silent`, '/dev/null'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
      let output = ''
      child.stdout.on('data', (c) => (output += c))
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', () => output.includes('Stop with Ctrl+C.') && resolve())
          void exited.then(() => reject(new Error(`exited before the banner:\n${output}`)))
        })
        assert.match(output, /Plinth is serving on http:\/\/127\.0\.0\.1:\d+/)
        assert.match(output, /API +http:\/\/localhost:9999\/v1/)
        assert.match(output, /MCP +http:\/\/localhost:9999\/mcp/)
        assert.match(output, /npx plinth user create/)
        assert.doesNotMatch(output, /"level":30/, 'no JSON info lines in a terminal')
      } finally {
        // Ctrl+C typed into the terminal interrupts npm and the server together, as in a shell.
        child.stdin.write('\x03')
        await exited
      }
    },
  )
})

function hasScript(): boolean {
  return spawnSync('script', ['--version']).status === 0
}
