/**
 * The browser pool when the server stops: pages waiting for a slot are refused with
 * BROWSER_UNAVAILABLE, and no browser is launched again for them, so nothing outlives the pool.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BrowserPool } from '../../src/browser/browser-pool.ts'
import { browserSkip } from '../helpers/browser.ts'

describe('the browser pool closing', { skip: browserSkip }, () => {
  test('a page waiting for a slot when the pool closes is refused, and no browser starts for it', async () => {
    const pool = new BrowserPool({ executable: '/usr/bin/chromium', pages: 1, log: { warn: () => {} } })
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    const first = pool.run(async (browser) => {
      started()
      await held
      return browser.version()
    })
    await running
    const waiting = pool.run((browser) => Promise.resolve(browser.version()))
    assert.equal(pool.stats().queued, 1)
    const closing = pool.close()
    release()
    await assert.rejects(waiting, (error: { code?: string }) => error.code === 'BROWSER_UNAVAILABLE')
    await first.catch(() => {})
    await closing
    assert.equal(pool.stats().launches, 1, 'no browser was launched for the page that waited')
    await assert.rejects(
      pool.run((browser) => Promise.resolve(browser.version())),
      (error: { code?: string }) => error.code === 'BROWSER_UNAVAILABLE',
    )
  })
})
