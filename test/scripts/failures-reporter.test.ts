import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'

const reporter = pathToFileURL(path.resolve('scripts/failures-reporter.js')).href

describe('the failures reporter', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-failures-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  /** Runs `source` as a test file under node --test with the reporter; what it wrote. */
  const report = (source: string): string => {
    const file = path.join(dir, `probe-${Math.random().toString(36).slice(2)}.test.mjs`)
    const out = path.join(dir, 'failures.txt')
    writeFileSync(file, source)
    rmSync(out, { force: true })
    spawnSync(process.execPath, ['--test', '--test-reporter', reporter, '--test-reporter-destination', out, file], {
      cwd: dir,
      // Not a child of this test run: one of its own, reporting as it is told.
      env: { ...process.env, NODE_TEST_CONTEXT: undefined },
    })
    return readFileSync(out, 'utf8')
  }

  it('names each failed test with its suites and error, and not the suites that failed for it', () => {
    const text = report(`
      import assert from 'node:assert/strict'
      import { describe, it } from 'node:test'
      describe('outer', () => {
        describe('inner', () => {
          it('compares', () => assert.equal(1, 2))
          it('passes', () => {})
        })
        it('throws', () => { throw new Error('boom at level two') })
      })
      it('passes alone', () => {})
    `)
    assert.match(text, /Failed: 2 tests/)
    assert.match(text, /✖ .*probe-\w+\.test\.mjs: outer › inner › compares\n {4}AssertionError/)
    assert.match(text, /✖ .*: outer › throws\n {4}Error: boom at level two/)
    assert.doesNotMatch(text, /passes/)
    assert.doesNotMatch(text, /✖ [^\n]*: outer\n/)
  })

  it('names tests cancelled with their suite, and says why', () => {
    const text = report(`
      import { describe, it } from 'node:test'
      describe('hangs', () => {
        it('never settles', () => new Promise(() => {}))
      })
    `)
    assert.match(text, /Failed: 1 test\n/)
    assert.match(text, /✖ .*: hangs › never settles\n {4}\(cancelledByParent\)\n {4}Promise resolution is still pending/)
  })

  it('writes nothing when every test passes', () => {
    assert.equal(report(`import { it } from 'node:test'\nit('passes', () => {})\n`), '')
  })
})
