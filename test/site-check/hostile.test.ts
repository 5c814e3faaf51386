/**
 * The site check is bounded whatever a bundle holds: a page of 100,000 links or ids, markup nested
 * tens of thousands deep, thousands of broken addresses. What it keeps of a file is capped (and
 * it says where it stopped short: CHECK_INCOMPLETE), a version lists at most WARNING_LIMIT
 * warnings and MORE_WARNINGS counts the rest, and the publish goes through.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Warning } from '../../src/core/schemas.ts'
import { scanText } from '../../src/publishing/content-rules.ts'
import { MAX_ANCHORS, MAX_PAGE_ITEMS, MAX_REFERENCES } from '../../src/site-check/file-facts.ts'
import { WARNING_LIMIT } from '../../src/site-check/site-check.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { HEAD, page, siteWarnings } from '../helpers/site-check.ts'

const codes = (warnings: Warning[]) => [...new Set(warnings.map((w) => w.code))]
const links = (count: number) => Array.from({ length: count }, (_, i) => `<a href=p${i}>.</a>`).join('')

describe('what the check keeps of a file is bounded', () => {
  test('a page of 100,000 links keeps the first distinct addresses, counting the rest', () => {
    const { facts } = scanText({ path: 'index.html', contentType: 'text/html', text: `${HEAD()}${links(100_000)}` }, 100, true)
    assert.equal(facts!.refs.length, MAX_REFERENCES)
    assert.equal(facts!.refsDropped, 100_000 - MAX_REFERENCES)
    const same = scanText({ path: 'index.html', contentType: 'text/html', text: `${HEAD()}${'<a href=same.html>.</a>'.repeat(100_000)}` }, 100, true)
    assert.equal(same.facts!.refs.length, 1, 'an address given again is kept once')
  })

  test('a page of 100,000 ids, each given twice, keeps a bounded list of anchors and of duplicates', () => {
    const ids = Array.from({ length: 50_000 }, (_, i) => `<p id=i${i}></p><p id=i${i}></p>`).join('')
    const { facts } = scanText({ path: 'index.html', contentType: 'text/html', text: `${HEAD()}${ids}` }, 100, true)
    assert.equal(facts!.anchors.length, MAX_ANCHORS)
    assert.equal(facts!.page!.duplicateIds.length, MAX_PAGE_ITEMS)
    const many = Array.from({ length: MAX_ANCHORS + 10 }, (_, i) => `<p id=j${i}></p>`).join('')
    const capped = scanText({ path: 'index.html', contentType: 'text/html', text: many }, 100, true)
    assert.equal(capped.facts!.anchors.length, MAX_ANCHORS)
    assert.equal(capped.facts!.anchorsComplete, false, 'a fragment not among them is then not judged')
  })

  test('a version lists at most WARNING_LIMIT warnings, every code at least once, then how many more', async () => {
    // 300 broken links, and an image that is both missing and without alt.
    const files = [page('index.html', `${links(300)}<img src="x.png">`)]
    const warnings = await siteWarnings(files)
    assert.equal(warnings.length, WARNING_LIMIT + 1)
    assert.deepEqual(codes(warnings), ['BROKEN_LINK', 'MISSING_ALT', 'MORE_WARNINGS'])
    assert.deepEqual(warnings.at(-1), {
      code: 'MORE_WARNINGS',
      path: '',
      message: `102 more warnings are not listed (at most ${WARNING_LIMIT} are, every code at least once): fix these and publish again to see the rest.`,
    })
  })
})

describe('hostile bundles publish, with bounded warnings (REST, worker threads)', () => {
  let server: TestServer
  let token: string
  before(async () => {
    server = await startTestServer('sqlite')
    token = (await server.user()).token
  })
  after(() => server?.close())

  const publish = async (files: Array<{ path: string; content: string }>) => {
    const res = await server.api('POST', '/v1/websites', { token, body: { category: 'other', files } })
    assert.equal(res.status, 201, res.text.slice(0, 500))
    return res.body.warnings as Warning[]
  }

  test('a page with 100,000 broken links: the first addresses checked, the page named incomplete, unused files not judged', async () => {
    const warnings = await publish([
      { path: 'index.html', content: `${HEAD()}${links(100_000)}` },
      { path: 'orphan.css', content: 'p { margin: 0 }' },
    ])
    assert.equal(warnings.length, WARNING_LIMIT + 1)
    assert.deepEqual(codes(warnings).sort(), ['BROKEN_LINK', 'CHECK_INCOMPLETE', 'MORE_WARNINGS', 'PAGE_TOO_HEAVY'])
    const incomplete = warnings.find((w) => w.code === 'CHECK_INCOMPLETE')!
    assert.match(
      incomplete.message,
      new RegExp(`^index\\.html names more than ${MAX_REFERENCES} distinct addresses: the ${100_000 - MAX_REFERENCES} beyond were not checked`),
    )
    assert.match(warnings.at(-1)!.message, new RegExp(`^${MAX_REFERENCES + 2 - WARNING_LIMIT} more warnings`))
  })

  test('markup nested 60,000 deep publishes with the warnings of its page', async () => {
    const depth = 60_000
    const warnings = await publish([
      { path: 'index.html', content: `<!doctype html><title>t</title>${'<div>'.repeat(depth)}<img src=a.png>${'</div>'.repeat(depth)}` },
    ])
    assert.deepEqual(codes(warnings), ['MISSING_LANG', 'MISSING_VIEWPORT', 'BROKEN_LINK', 'MISSING_ALT'])
  })
})
