/**
 * The settings table of the guide (docs/guide/self-hosting.md, "Settings") names exactly the
 * environment variables that loadConfig reads: none missing, none that Plinth ignores.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'

const GUIDE_PAGE = new URL('../../docs/guide/self-hosting.md', import.meta.url)

/** The variables loadConfig asks its environment for, given values that take every branch. */
function variablesRead(): Set<string> {
  const read = new Set<string>()
  // `s3` makes the bucket's settings read, which the filesystem store never asks for.
  const values: Record<string, string> = { PLINTH_BLOB_STORE: 's3', PLINTH_S3_BUCKET: 'plinth-blobs' }
  const env = new Proxy(values, {
    get(target, name) {
      if (typeof name === 'string') read.add(name)
      return target[name as string]
    },
  })
  loadConfig(env, '/srv/plinth')
  return read
}

/** The first column of the table under "## Settings", up to the next section. */
function variablesDocumented(): string[] {
  const page = readFileSync(GUIDE_PAGE, 'utf8')
  const section = /^## Settings\n([\s\S]*?)(?=^## )/m.exec(page)
  assert.ok(section, 'self-hosting.md has a "## Settings" section')
  return [...section[1]!.matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((match) => match[1]!)
}

describe('the settings table', () => {
  test('lists every variable loadConfig reads, once', () => {
    const documented = variablesDocumented()
    assert.ok(documented.length > 20, `found only ${documented.length} rows`)
    assert.deepEqual(
      documented.filter((name, i) => documented.indexOf(name) !== i),
      [],
      'variables listed twice',
    )
    const missing = [...variablesRead()].filter((name) => !documented.includes(name)).sort()
    assert.deepEqual(missing, [], 'variables loadConfig reads that docs/guide/self-hosting.md does not list')
  })

  test('lists no variable loadConfig does not read', () => {
    const read = variablesRead()
    const unread = variablesDocumented().filter((name) => !read.has(name))
    assert.deepEqual(unread, [], 'variables docs/guide/self-hosting.md lists that loadConfig never reads')
  })

  test('sees the variables read only on some branches', () => {
    const read = variablesRead()
    for (const name of ['PORT', 'DATABASE_URL', 'PLINTH_S3_PREFIX', 'PLINTH_MAX_BUNDLE_BYTES']) assert.ok(read.has(name), name)
  })
})
