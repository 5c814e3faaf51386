/**
 * A batch of maximal pathological rich text sent to Plinth as `npm start` runs it: the server
 * lives, answers per entry and meanwhile answers other requests, within a bounded RSS.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { after, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { RICH_TEXT_MAX_CHARS } from '../../src/core/limits.ts'
import { COMPILED_MAIN, ensureBuilt, ROOT } from '../helpers/build.ts'
import { PATHOLOGICAL_RICH_TEXT } from '../helpers/content.ts'
import { createStore } from '../helpers/stores.ts'

/** Largest RSS the server process may reach while rendering them (see docs/benchmarks.md, "Rich text limits"). */
const RSS_BOUND_MIB = 1024

function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : 0
}

describe('a batch of maximal pathological rich text against `npm start`', () => {
  let child: ReturnType<typeof spawn> | undefined
  let dispose: (() => Promise<void>) | undefined
  after(async () => {
    child?.kill('SIGKILL')
    await dispose?.()
  })

  test(`30 entries of ${RICH_TEXT_MAX_CHARS} characters: the server lives, answers per entry and stays under ${RSS_BOUND_MIB} MiB`, async () => {
    const store = await createStore('sqlite')
    dispose = store.dispose
    const env = { ...process.env, DATABASE_URL: '', PORT: '0', HOST: '127.0.0.1', PLINTH_DATA_DIR: store.dataDir, PLINTH_LOG_LEVEL: 'info' }
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, [path.join(ROOT, 'bin/plinth.js'), ...args], { env })
    await cli('user', 'create', '--email', 'load@example.com', '--password', 'long enough')
    const token = (await cli('token', 'create', '--email', 'load@example.com', '--access', 'rest')).stdout.trim().split('\n').at(-1)!

    // The command `npm start` runs (the compiled server, whose threads run compiled modules), started directly so its pid is the server's.
    await ensureBuilt()
    child = spawn(process.execPath, [COMPILED_MAIN], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const pid = child.pid!
    let output = ''
    child.stderr!.on('data', (c) => (output += c))
    const address = await new Promise<string>((resolve, reject) => {
      child!.stdout!.on('data', (c) => {
        output += c
        const match = /Plinth is serving on (http:\/\/[^"\s]+)/.exec(output)
        if (match) resolve(match[1]!)
      })
      child!.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)))
    })
    const api = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(address + url, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return { status: res.status, body: await res.json() }
    }
    const site = await api('POST', '/v1/websites', {
      name: 'Load',
      category: 'other',
      files: [{ path: 'index.html', content: '<!doctype html><title>x</title>' }],
    })
    assert.equal(site.status, 201)
    const collection = await api('POST', `/v1/websites/${site.body.websiteId}/collections`, {
      name: 'posts',
      label: 'Posts',
      fields: [
        { name: 'title', label: 'Title', type: 'text', required: true },
        { name: 'body', label: 'Body', type: 'richText' },
      ],
    })
    assert.equal(collection.status, 201)

    let peak = 0
    let answered = 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, rssMiB(pid))
        if ((await fetch(`${address}/v1`)).status === 200) answered++
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    })()
    const entries = Array.from({ length: 30 }, (_, i) => ({ slug: `bad-${i}`, data: { title: `Bad ${i}`, body: { html: PATHOLOGICAL_RICH_TEXT } } }))
    const batch = await api('POST', `/v1/websites/${site.body.websiteId}/collections/posts/entries/batch`, { entries })
    sampling = false
    await sampler
    peak = Math.max(peak, rssMiB(pid))

    assert.equal(batch.status, 200)
    assert.equal(batch.body.results.length, 30)
    for (const result of batch.body.results) {
      assert.ok(
        result.status === 'created' || ['RICH_TEXT_TOO_COSTLY', 'RICH_TEXT_BUDGET_EXCEEDED'].includes(result.error?.code),
        JSON.stringify(result).slice(0, 300),
      )
    }
    assert.ok(
      batch.body.results.some((r: any) => r.error?.code === 'RICH_TEXT_BUDGET_EXCEEDED'),
      'the batch is bounded by its budget',
    )
    assert.ok(answered > 0, 'other requests were answered meanwhile')
    assert.equal(child.exitCode, null, 'the server is alive')
    assert.equal((await fetch(`${address}/v1`)).status, 200)
    assert.ok(peak < RSS_BOUND_MIB, `peak RSS ${peak.toFixed(0)} MiB`)
    console.log(`# peak RSS of the server: ${peak.toFixed(0)} MiB; /v1 answered ${answered} times meanwhile`)
    child.kill('SIGTERM')
  })
})
