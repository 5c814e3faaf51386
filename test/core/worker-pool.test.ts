import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, describe, test } from 'node:test'
import { WorkerPool } from '../../src/core/worker-pool.ts'

/** The content rules' thread module: any module a pool runs will do. */
const THREAD = new URL('../../src/publishing/content-scans.thread.ts', import.meta.url).href

describe('worker pool threads', () => {
  const pool = new WorkerPool(THREAD, 'test', { threads: 2, timeLimitMs: 10_000, memoryMb: 128, idleTimeoutMs: 300 })
  after(() => pool.close())

  test('no thread runs before the first task, and every thread, the last one too, stops after an idle spell', async () => {
    assert.equal(pool.threadCount, 0, 'a pool starts no thread before it has work')
    const scan = { path: 'index.html', contentType: 'text/html', text: '<!doctype html><title>x</title><p>x</p>' }
    const found = await pool.run<unknown[][]>({ scans: [scan], limit: 10 })
    assert.deepEqual(found, [[]])
    assert.ok(pool.threadCount >= 1, 'the task ran in a thread')
    // Waits for the state, not for a time: gives up after 30 s.
    for (let i = 0; i < 300 && pool.threadCount > 0; i++) await sleep(100)
    assert.equal(pool.threadCount, 0, 'an idle pool keeps no thread')
    // And starts one again for the next task.
    assert.deepEqual(await pool.run<unknown[][]>({ scans: [scan], limit: 10 }), [[]])
  })
})
