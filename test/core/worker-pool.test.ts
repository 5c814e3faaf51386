import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, describe, test } from 'node:test'
import { WorkerPool } from '../../src/core/worker-pool.ts'
import { CONTENT_SCAN_THREAD } from '../../src/publishing/content-scans.pool.ts'
import { useCompiledThreadModules } from '../helpers/build.ts'

await useCompiledThreadModules()

/** The content rules' thread module: any module a pool runs will do. */
const THREAD = CONTENT_SCAN_THREAD

const scan = { path: 'index.html', contentType: 'text/html', text: '<!doctype html><title>x</title><p>x</p>' }
/** What the thread answers for a page that breaks no rule, when no site check is asked for. */
const NOTHING_FOUND = { found: [], facts: null, forms: [] }

describe('worker pool threads', () => {
  const pool = new WorkerPool(THREAD, 'test', { threads: 2, timeLimitMs: 10_000, memoryMb: 128, idleTimeoutMs: 300 })
  const patient = new WorkerPool(THREAD, 'test', { threads: 1, timeLimitMs: 10_000, memoryMb: 128, idleTimeoutMs: 60_000 })
  after(() => Promise.all([pool.close(), patient.close()]))

  test('no thread runs before the first task, and every thread, the last one too, stops after an idle spell', async () => {
    assert.equal(pool.threadIds.length, 0, 'a pool starts no thread before it has work')
    const found = await pool.run<unknown[]>({ scans: [scan], limit: 10 })
    assert.deepEqual(found, [NOTHING_FOUND])
    assert.ok(pool.threadIds.length >= 1, 'the task ran in a thread')
    // Waits for the state, not for a time: gives up after 30 s.
    for (let i = 0; i < 300 && pool.threadIds.length > 0; i++) await sleep(100)
    assert.equal(pool.threadIds.length, 0, 'an idle pool keeps no thread')
    // And starts one again for the next task.
    assert.deepEqual(await pool.run<unknown[]>({ scans: [scan], limit: 10 }), [NOTHING_FOUND])
  })

  test('a thread that waited less than the idle time takes the next task itself: no new thread starts', async () => {
    assert.deepEqual(await patient.run<unknown[]>({ scans: [scan], limit: 10 }), [NOTHING_FOUND])
    const [first] = patient.threadIds
    assert.ok(first !== undefined, 'the task ran in a thread')
    // Longer than the quiet that stopped every thread of the pool above, far shorter than this pool's idle time.
    await sleep(1500)
    assert.deepEqual(patient.threadIds, [first], 'the idle thread is still there')
    assert.deepEqual(await patient.run<unknown[]>({ scans: [scan], limit: 10 }), [NOTHING_FOUND])
    assert.deepEqual(patient.threadIds, [first], 'the second task ran in the same thread')
  })
})
