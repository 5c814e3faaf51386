/**
 * The real `plinth deploy` process against a server on another port, named by PLINTH_URL: what a
 * person with a built folder runs. It loads no server code: no database, no settings of the
 * instance, nothing from the server's folders.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { createUser, PNG, type TestUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

const execute = promisify(execFile)
const BIN = path.resolve(import.meta.dirname, '../../bin/plinth.js')

describe('the plinth deploy command, run as a process', () => {
  let server: TestServer
  let owner: TestUser
  let root: string
  before(async () => {
    server = await startTestServer('sqlite')
    owner = await createUser(server)
    root = mkdtempSync(path.join(os.tmpdir(), 'plinth-deploy-cmd-'))
    mkdirSync(path.join(root, 'dist', 'img'), { recursive: true })
    writeFileSync(
      path.join(root, 'dist', 'index.html'),
      '<!doctype html><html lang="en"><head><title>Cafe</title></head><body><img src="img/a.png" alt="A"></body></html>',
    )
    writeFileSync(path.join(root, 'dist', 'img', 'a.png'), PNG)
  })
  after(async () => {
    await server?.close()
    rmSync(root, { recursive: true, force: true })
  })

  /** Runs the command in `root` with only PLINTH_URL and PLINTH_TOKEN set for Plinth; never throws. */
  async function plinth(args: string[], token = owner.token) {
    // No PLINTH_DATA_DIR and no DATABASE_URL: the command must not need the instance's settings.
    const env = { PATH: process.env.PATH, HOME: root, PLINTH_URL: server.url, PLINTH_TOKEN: token }
    try {
      const { stdout, stderr } = await execute(process.execPath, [BIN, ...args], { env, cwd: root })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string }
      return { code: e.code, stdout: e.stdout, stderr: e.stderr }
    }
  }

  test('deploys dist/ as a new site named after its project folder, with --json alone on stdout', async () => {
    const done = await plinth(['deploy', 'dist', '--json'])
    assert.equal(done.code, 0, done.stderr)
    assert.equal(done.stderr, '', 'no progress when stderr is no terminal')
    const result = JSON.parse(done.stdout)
    assert.deepEqual(
      Object.keys(result).sort(),
      ['bytesSent', 'filesReused', 'filesSent', 'isCurrent', 'pageUrl', 'slug', 'version', 'versionId', 'warnings', 'websiteId'].sort(),
    )
    assert.ok(Array.isArray(result.warnings), "the site check's warnings, a list")
    assert.equal(result.filesSent, 2)
    const site = (await server.api('GET', `/v1/websites/${result.websiteId}`, { token: owner.token })).body
    assert.equal(site.name, path.basename(root))
    assert.equal((await server.site(result.slug, '/img/a.png')).status, 200)

    const human = await plinth(['deploy', 'dist', '--site', result.slug])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, new RegExp(`^Published version 2 of ${result.slug}: http://`))
    assert.match(human.stdout, /0 files sent \(0 B\), 2 reused/)
  })

  test('a refused folder exits 2 with every violation; a wrong token exits 1 with one line', async () => {
    writeFileSync(path.join(root, 'bad.html'), '<html><script src="https://cdn.example.com/a.js"></script></html>')
    mkdirSync(path.join(root, 'bad'), { recursive: true })
    writeFileSync(path.join(root, 'bad', 'page.html'), '<html><script src="https://cdn.example.com/a.js"></script></html>')
    const refused = await plinth(['deploy', 'bad'])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /^ {2}MISSING_INDEX/m)
    assert.match(refused.stderr, /^ {2}EXTERNAL_URL page\.html/m)
    const wrong = await plinth(['deploy', 'dist'], 'plinth_wrong')
    assert.equal(wrong.code, 1)
    assert.equal(wrong.stderr.trim().split('\n').length, 1, wrong.stderr)
    assert.match(wrong.stderr, /^plinth: /)
  })
})
