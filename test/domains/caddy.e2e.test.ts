/**
 * Custom domains behind a real Caddy (Debian's package), as the custom-domains guide sets it up:
 * `on_demand_tls` asks Plinth's /tls/ask before getting a certificate (here from Caddy's own
 * internal CA), so a verified custom domain gets one and is served over https, and a domain
 * Plinth does not serve gets none. curl checks both with Caddy's root certificate.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Principal } from '../../src/core/principal.ts'
import { freePort } from '../helpers/net.ts'
import { bundle, startTestServer, type TestServer } from '../helpers/server.ts'
import { TestDnsServer } from './dns-server.ts'

const caddyMissing = spawnSync('caddy', ['version']).status !== 0 || spawnSync('curl', ['--version']).status !== 0
const skip = caddyMissing ? 'caddy or curl is not installed (apt-get install -y caddy curl): the end-to-end TLS test is skipped' : false

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (child.exitCode !== null) throw new Error(`caddy exited with ${child.exitCode}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy()
        resolve(true)
      })
      socket.on('error', () => resolve(false))
    })
    if (open) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`caddy did not listen on ${port}`)
}

/** curl over https to `domain`, resolved to Caddy on loopback, trusting only Caddy's root. */
function curl(domain: string, port: number, caRoot: string): Promise<{ code: number; body: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'curl',
      ['-sS', '--max-time', '20', '--resolve', `${domain}:${port}:127.0.0.1`, '--cacert', caRoot, `https://${domain}:${port}/`],
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, body: stdout, stderr }),
    )
  })
}

describe('custom domains behind Caddy with on-demand TLS', { skip }, () => {
  let dns: TestDnsServer
  let server: TestServer
  let caddy: ChildProcess
  let home: string
  let httpsPort: number
  let caRoot: string

  before(async () => {
    dns = await TestDnsServer.start()
    server = await startTestServer('sqlite', { PLINTH_DNS_SERVERS: dns.address })
    const plinthPort = new URL(server.url).port
    home = mkdtempSync(path.join(os.tmpdir(), 'plinth-caddy-'))
    httpsPort = await freePort()
    const httpPort = await freePort()
    const caddyfile = path.join(home, 'Caddyfile')
    writeFileSync(
      caddyfile,
      `{
	admin off
	skip_install_trust
	http_port ${httpPort}
	https_port ${httpsPort}
	on_demand_tls {
		ask http://127.0.0.1:${plinthPort}/tls/ask
	}
}

https:// {
	tls internal {
		on_demand
	}
	reverse_proxy 127.0.0.1:${plinthPort}
}
`,
    )
    // Caddy keeps its CA and certificates under XDG_DATA_HOME: a temp folder of this test.
    caddy = spawn('caddy', ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
      env: { ...process.env, HOME: home, XDG_DATA_HOME: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config') },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let log = ''
    caddy.stderr!.on('data', (chunk) => (log = (log + chunk).slice(-20_000)))
    caddy.on('exit', (code) => code !== 0 && code !== null && console.error(`caddy exited with ${code}:\n${log}`))
    await waitForPort(httpsPort, caddy)
    caRoot = path.join(home, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt')
  })
  after(async () => {
    if (caddy && caddy.exitCode === null) {
      const exited = new Promise((resolve) => caddy.once('exit', resolve))
      caddy.kill('SIGTERM')
      await exited
    }
    await server?.close()
    await dns?.close()
    if (home) rmSync(home, { recursive: true, force: true })
  })

  test('a verified custom domain gets a certificate and serves its site over https; an unverified one gets none', async () => {
    const user = await server.user()
    const principal: Principal = { userId: user.id, email: user.email, name: null, tokenId: user.tokenId, access: 'both', capabilities: null, sites: null }
    const created = await server.api('POST', '/v1/websites', {
      token: user.token,
      body: { name: 'Behind Caddy', category: 'other', files: bundle('Served through Caddy') },
    })
    assert.equal(created.status, 201, created.text)
    const websiteId = created.body.websiteId
    const suffix = Math.random().toString(36).slice(2, 8)
    const verified = `shop-${suffix}.example.com`
    const pending = `pending-${suffix}.example.com`
    const { domains } = server.server.services

    const added = await domains.add(principal, websiteId, verified)
    dns.txt.set(`_plinth-challenge.${verified}`, [[added.record.value]])
    assert.equal((await domains.verify(principal, websiteId, verified)).status, 'verified')
    await domains.add(principal, websiteId, pending)

    // Caddy's internal CA is made at the first certificate it issues: ask for the verified domain first.
    const served = await curl(verified, httpsPort, caRoot)
    assert.equal(served.code, 0, `curl failed: ${served.stderr}`)
    assert.match(served.body, /Served through Caddy/)

    const refused = await curl(pending, httpsPort, caRoot)
    assert.notEqual(refused.code, 0, 'no certificate for a domain Plinth does not serve')
    assert.doesNotMatch(refused.body, /Served through Caddy/)
    const unknown = await curl(`nobody-${suffix}.example.org`, httpsPort, caRoot)
    assert.notEqual(unknown.code, 0)
  })
})
