/**
 * An agent's draft workflow end to end, with the MCP SDK 1.x client (which checks every result
 * against the tool's outputSchema) against a real server: a 12-file, 60 KB site (HTML pages, CSS,
 * JS, an image) is built in a draft by calls whose arguments are each under 8 KB, read back file
 * by file and seen on the draft's preview host, published, then changed by one edit_file in a new
 * draft and published again; the two versions differ in exactly that file.
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { crc32, deflateSync } from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import { createUser } from '../helpers/factories.ts'
import { call, connect, type McpClient } from '../helpers/mcp.ts'
import { SITE_DOMAIN, startTestServer, type TestServer } from '../helpers/server.ts'

/** No call's JSON arguments may reach this: an agent's calls stay small however large the site. */
const ARGUMENTS_MAX = 8 * 1024
const FILE_MAX = 6 * 1024
const SITE_BYTES = 60_000

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex')

/** A valid PNG of random pixels (so that it does not compress), `side` pixels square. */
function png(side: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([length, body, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(side, 0)
  header.writeUInt32BE(side, 4)
  header.set([8, 2, 0, 0, 0], 8) // 8-bit RGB, no interlace
  const rows = Array.from({ length: side }, () => Buffer.concat([Buffer.from([0]), randomBytes(side * 3)]))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

const PAGES = ['index', 'about', 'menu', 'hours', 'catering', 'gallery', 'contact', '404']

/** A page of about 5.8 KB: a header linking every page, paragraphs, the logo, the stylesheet and the script. */
function page(name: string): string {
  const nav = PAGES.filter((p) => p !== '404')
    .map((p) => `<a href="${p === 'index' ? '/' : `/${p}`}">${p}</a>`)
    .join(' ')
  const paragraph = (n: number) => `<p id="p${n}">Rosa's bakery, ${name} section, paragraph ${n}: bread, pastries and coffee made every morning. </p>\n`
  let body = ''
  for (let n = 1; body.length < 5_300; n++) body += paragraph(n)
  return `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Rosa's Bakery: ${name}</title>\n<link rel="stylesheet" href="/css/site.css">\n<script src="/js/site.js" defer></script>\n</head>\n<body>\n<header><img src="/img/logo.png" alt="Rosa's"> <nav>${nav}</nav></header>\n<main>\n<h1>${name}</h1>\n${body}</main>\n</body>\n</html>\n`
}

function stylesheet(): string {
  let css = ':root { --ink: #222; --paper: #fffaf3; }\nbody { margin: 0; font-family: Georgia, serif; color: var(--ink); background: var(--paper); }\n'
  for (let n = 1; css.length < 5_600; n++) css += `#p${n} { line-height: 1.${n % 10}; margin: ${n % 7}px 0; }\n`
  return css
}

function script(): string {
  let js = "document.documentElement.classList.add('js')\n"
  for (let n = 1; js.length < 5_600; n++) js += `document.getElementById('p${n}')?.setAttribute('data-n', '${n}')\n`
  return js
}

interface SiteFile {
  path: string
  bytes: Buffer
  /** How write_file is given the bytes. */
  args: { content: string; contentEncoding?: 'base64' }
}

const text = (path: string, content: string): SiteFile => ({ path, bytes: Buffer.from(content), args: { content } })

const SITE: SiteFile[] = [
  ...PAGES.map((name) => text(`${name}.html`, page(name))),
  text('css/site.css', stylesheet()),
  text('js/site.js', script()),
  text('robots.txt', 'User-agent: *\nAllow: /\n'),
  ((bytes) => ({ path: 'img/logo.png', bytes, args: { content: bytes.toString('base64'), contentEncoding: 'base64' } }))(png(32)),
]

/**
 * One workflow, a step a test, in order: each step works on what the steps before it made, and
 * a step that fails leaves the ones after it failing too.
 */
describe('an agent builds, checks, publishes and edits a site in drafts over MCP (SDK 1.x client)', () => {
  let server: TestServer
  let client: McpClient
  const argumentSizes: Array<[string, number]> = []
  let websiteId: string
  let placeholderUrl: string
  let draft: { draftId: string; previewUrl: string }
  let first: { jobId: string; pageUrl: string; version: number; isCurrent: boolean }

  /** A tool call that must succeed, its arguments measured first. */
  const send = async (name: string, args: Record<string, unknown>) => {
    argumentSizes.push([name, Buffer.byteLength(JSON.stringify(args))])
    const result = await call(client, name, args)
    assert.equal(result.isError, false, `${name}: ${JSON.stringify(result.data)}`)
    return result.data
  }

  /** A request to the host of a URL the server answered (a site, a version's or a draft's preview). */
  const fetchFrom = (url: string, path: string) => server.site(new URL(url).hostname.replace(`.${SITE_DOMAIN.split(':')[0]}`, ''), path)

  before(async () => {
    server = await startTestServer('sqlite')
    const user = await createUser(server, { access: 'mcp' })
    client = await connect(server, user.token, { client: 'sdk1' })
  })
  after(async () => {
    await client?.close()
    await server?.close()
  })

  it('has a site of 12 files under 6 KB each, 60 KB in all', () => {
    assert.equal(SITE.length, 12)
    for (const file of SITE) assert.ok(file.bytes.length < FILE_MAX, `${file.path} is ${file.bytes.length} bytes`)
    const total = SITE.reduce((sum, file) => sum + file.bytes.length, 0)
    assert.ok(total >= SITE_BYTES && total < SITE_BYTES + 5_000, `the site is ${total} bytes`)
  })

  it('builds the site in a draft of a placeholder, one file a call', async () => {
    // A site too large for one call starts as a placeholder page.
    const created = await send('publish_website', {
      name: "Rosa's Bakery",
      category: 'restaurant',
      files: [{ path: 'index.html', content: '<!doctype html><title>Soon</title><p>Opening soon.</p>' }],
    })
    websiteId = created.websiteId
    placeholderUrl = created.pageUrl
    draft = await send('start_draft', { websiteId })
    for (const file of SITE) {
      const written = await send('write_file', { websiteId, draftId: draft.draftId, path: file.path, ...file.args })
      assert.deepEqual([written.path, written.size, written.sha256], [file.path, file.bytes.length, sha256(file.bytes)])
    }
    const listed = await send('list_files', { websiteId, draftId: draft.draftId })
    assert.deepEqual(
      listed.files.map((f: any) => [f.path, f.size, f.change]),
      SITE.map((f) => [f.path, f.bytes.length, f.path === 'index.html' ? 'changed' : 'added']).sort(),
    )
  })

  it("reads back every file of the draft as it was written, and a range of a page's lines", async () => {
    for (const file of SITE) {
      const read = await send('read_file', { websiteId, draftId: draft.draftId, path: file.path })
      assert.equal(read.sha256, sha256(file.bytes), file.path)
      assert.deepEqual(Buffer.from(read.content, read.contentEncoding === 'base64' ? 'base64' : 'utf8'), file.bytes, file.path)
    }
    const lines = await send('read_file', { websiteId, draftId: draft.draftId, path: 'menu.html', offset: 10, limit: 3 })
    assert.deepEqual([lines.lines.from, lines.lines.to], [10, 12])
    assert.equal(
      lines.content,
      SITE.find((f) => f.path === 'menu.html')!
        .bytes.toString()
        .split('\n')
        .slice(9, 12)
        .join('\n') + '\n',
    )
  })

  it('serves the draft on its preview host, page by clean URL too, while the live site keeps the placeholder', async () => {
    for (const file of SITE) {
      const previewed = await fetchFrom(draft.previewUrl, `/${file.path}`)
      assert.equal(previewed.status, 200, `${draft.previewUrl}${file.path}`)
      assert.deepEqual(previewed.body, file.bytes, `the preview serves the draft's ${file.path}`)
    }
    assert.deepEqual((await fetchFrom(draft.previewUrl, '/about')).body, SITE.find((f) => f.path === 'about.html')!.bytes)
    const missing = await fetchFrom(draft.previewUrl, '/nowhere')
    assert.equal(missing.status, 404)
    assert.match(missing.body.toString(), /<h1>404<\/h1>/, "the draft's own 404 page")
    assert.match((await fetchFrom(placeholderUrl, '/')).body.toString(), /Opening soon/)
  })

  it('publishes the draft: every file is live', async () => {
    first = await send('publish_draft', { websiteId, draftId: draft.draftId, message: 'The whole site' })
    assert.deepEqual([first.version, first.isCurrent], [2, true])
    for (const file of SITE) assert.deepEqual((await fetchFrom(first.pageUrl, `/${file.path}`)).body, file.bytes, `live ${file.path}`)
  })

  it('changes one page by one edit_file in a new draft; the second version differs from the first in that file alone', async () => {
    const next = await send('start_draft', { websiteId })
    assert.equal(next.baseVersion, 2)
    const edit = { oldText: '<h1>hours</h1>', newText: '<h1>Opening hours: 7 to 19, every day</h1>' }
    const edited = await send('edit_file', { websiteId, draftId: next.draftId, path: 'hours.html', edits: [edit] })
    const hours = SITE.find((f) => f.path === 'hours.html')!
      .bytes.toString()
      .replace(edit.oldText, edit.newText)
    assert.equal(edited.sha256, sha256(hours))
    const second = await send('publish_draft', { websiteId, draftId: next.draftId, message: 'Opening hours' })
    assert.deepEqual([second.version, second.isCurrent], [3, true])
    assert.equal((await fetchFrom(second.pageUrl, '/hours')).body.toString(), hours)

    const diff = await send('diff_versions', { websiteId, from: first.jobId, to: second.jobId })
    assert.deepEqual(
      diff.files.map((f: any) => [f.path, f.status]),
      [['hours.html', 'changed']],
    )
    assert.match(diff.files[0].diff, /^-<h1>hours<\/h1>\n\+<h1>Opening hours: 7 to 19, every day<\/h1>$/m)
    const { versions } = await send('list_versions', { websiteId, limit: 2 })
    assert.deepEqual(
      versions.map((v: any) => v.id),
      [second.jobId, first.jobId],
    )
    const hashes = (version: any) => new Map<string, string>(version.files.map((f: any) => [f.originalName, f.sha256]))
    const [now, before] = [hashes(versions[0]), hashes(versions[1])]
    assert.deepEqual([...now.keys()].sort(), SITE.map((f) => f.path).sort())
    assert.deepEqual(
      [...now.keys()].filter((path) => now.get(path) !== before.get(path)),
      ['hours.html'],
      'only the edited file has other bytes',
    )
    assert.equal(now.get('hours.html'), sha256(hours))
  })

  it('made every call with under 8 KB of arguments', () => {
    assert.equal(argumentSizes.filter(([name]) => name === 'write_file').length, SITE.length)
    for (const [name, size] of argumentSizes) assert.ok(size < ARGUMENTS_MAX, `${name} was called with ${size} bytes of arguments`)
  })
})
