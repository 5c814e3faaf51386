#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against a throwaway
// Plinth instance: a temp data dir, a user and an MCP token made with `plinth`, the server, and
// a local proxy in front of it that adds the bearer token (the suite cannot send one). The proxy
// is the instance's public address (PLINTH_BASE_URL), as a reverse proxy is in production.
//
//   npm run conformance:mcp                      the scenarios that apply to a tools-only server
//   npm run conformance:mcp -- tools-list ping   only these scenarios
//
// The suite needs Node 22 or later: `npx -p node@24` fetches one for this run only (network
// needed the first time), leaving the system's Node alone. Exits non-zero if any scenario fails.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'

const SUITE = '@modelcontextprotocol/conformance@0.1.16'
/** The server scenarios a server offering only tools must pass; the others need the suite's own test tools, resources or prompts. */
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']
const EMAIL = 'conformance@example.com'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const scenarios = process.argv.slice(2).length > 0 ? process.argv.slice(2) : APPLICABLE

const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
    probe.on('error', reject)
  })

function plinth(env, args) {
  const result = spawnSync(process.execPath, [path.join(root, 'bin/plinth.js'), ...args], { cwd: root, env, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`plinth ${args.join(' ')} failed: ${result.stderr || result.stdout}`)
  return result.stdout.trim().split('\n').at(-1)
}

/**
 * Waits until Plinth answers at url. A cold start (first run after install: SQLite migrates) can
 * take many seconds on a slow machine, so the bound is generous
 * and a server that exits early ends the wait at once.
 */
async function waitUntilUp(url, server, seconds = 120) {
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`Plinth exited with code ${server.exitCode}`)
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`Plinth did not answer at ${url} within ${seconds} seconds`)
}

/** Forwards everything to Plinth unchanged (Host and Origin included), adding the bearer token. */
function startProxy(port, target, token) {
  const proxy = http.createServer((req, res) => {
    const headers = { ...req.headers }
    headers.authorization ??= `Bearer ${token}`
    const upstream = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  return new Promise((resolve) => proxy.listen(port, '127.0.0.1', () => resolve(proxy)))
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-conformance-'))
const [plinthPort, proxyPort] = [await freePort(), await freePort()]
const publicUrl = `http://localhost:${proxyPort}`
const env = {
  ...process.env,
  PORT: String(plinthPort),
  HOST: '127.0.0.1',
  PLINTH_DATA_DIR: dataDir,
  PLINTH_BASE_URL: publicUrl,
  PLINTH_LOG_LEVEL: 'warn',
}
delete env.DATABASE_URL // a throwaway SQLite store, never a configured database

let server
let proxy
let failed = 0
try {
  plinth(env, ['user', 'create', '--email', EMAIL, '--password', 'conformance-password', '--name', 'Conformance'])
  const token = plinth(env, ['token', 'create', '--email', EMAIL, '--name', 'conformance', '--access', 'mcp'])

  // What `npm start` runs: the compiled server (bin/plinth.js above built it when it was out of date).
  server = spawn(process.execPath, ['dist/main.js'], { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] })
  await waitUntilUp(`http://127.0.0.1:${plinthPort}/v1`, server)
  proxy = await startProxy(proxyPort, plinthPort, token)

  // 127.0.0.1 rather than localhost: the suite's DNS-rebinding check wants a loopback URL, and
  // localhost may resolve to ::1 first, where the proxy does not listen.
  const mcpUrl = `http://127.0.0.1:${proxyPort}/mcp`
  console.log(`Plinth ${publicUrl} (data ${dataDir}); conformance suite against ${mcpUrl}\n`)
  for (const scenario of scenarios) {
    // Not spawnSync: the proxy runs in this process and must keep answering meanwhile.
    const suite = spawn(
      'npx',
      ['-y', '-p', 'node@24', '-p', SUITE, 'conformance', 'server', '--url', mcpUrl, '--scenario', scenario, '-o', path.join(dataDir, 'results')],
      {
        cwd: dataDir,
        stdio: 'inherit',
        env: { ...process.env, npm_config_update_notifier: 'false' },
      },
    )
    const ok = (await new Promise((resolve) => suite.once('exit', resolve))) === 0
    if (!ok) failed++
    console.log(`${ok ? 'PASS' : 'FAIL'} ${scenario}\n`)
  }
  console.log(`${scenarios.length - failed} of ${scenarios.length} scenarios passed.`)
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  failed = failed || 1
} finally {
  proxy?.close()
  if (server && server.exitCode === null) {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
  }
  rmSync(dataDir, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
