/**
 * The getting-started guide is what a new user runs first: each of its `curl … -d '{…}'` publish
 * commands is sent as written (with $SITE the site it made), and the answer shown after it in the
 * guide is the answer they get: the same fields, and the same values where the guide gives one
 * (ids and addresses are written `…` or name the default local host, and are not compared).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createUser, type TestUser } from '../helpers/factories.ts'
import { startTestServer, type TestServer } from '../helpers/server.ts'

const GUIDE = readFileSync(fileURLToPath(new URL('../../docs/guide/getting-started.md', import.meta.url)), 'utf8')

/** A publish command of the guide, with the answer it shows after it. */
interface Example {
  path: string
  body: unknown
  answer: Record<string, unknown>
}

/** Every `curl -s http://localhost:8080/v1/… -d '…'` block of the guide followed by a ```json answer. */
function examples(markdown: string): Example[] {
  const blocks = [...markdown.matchAll(/```(sh|json)\n([\s\S]*?)```/g)].map(([, kind, text]) => ({ kind: kind!, text: text! }))
  const found: Example[] = []
  blocks.forEach((block, i) => {
    const command = /curl -s http:\/\/localhost:8080(\/v1\/\S+)[\s\S]*?-d '([\s\S]*?)'/.exec(block.text)
    const next = blocks[i + 1]
    if (block.kind !== 'sh' || !command || next?.kind !== 'json') return
    found.push({ path: command[1]!, body: JSON.parse(command[2]!), answer: JSON.parse(next.text) as Record<string, unknown> })
  })
  return found
}

/** A documented value that stands for whatever the server makes: an id or an address. */
const placeholder = (value: unknown) => typeof value === 'string' && (value.includes('…') || value.startsWith('http://'))

describe('the getting-started guide, run as written', () => {
  let server: TestServer
  let user: TestUser
  before(async () => {
    server = await startTestServer('sqlite')
    user = await createUser(server)
  })
  after(() => server?.close())

  test('its publish commands answer what it shows', async () => {
    const found = examples(GUIDE)
    assert.equal(found.length, 2, 'the first site and its second version')
    let site = ''
    for (const { path, body, answer } of found) {
      const sent = await server.api('POST', path.replace('$SITE', site), { token: user.token, body })
      assert.equal(sent.status, 201, sent.text)
      site ||= sent.body.websiteId
      assert.deepEqual(Object.keys(sent.body).sort(), Object.keys(answer).sort(), `${path}: the fields shown are the fields sent back`)
      for (const [field, value] of Object.entries(answer)) {
        if (!placeholder(value)) assert.deepEqual(sent.body[field], value, `${path}: ${field}`)
      }
    }
  })
})
