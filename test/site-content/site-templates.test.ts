import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Liquid } from 'liquidjs'
import { DEFAULT_ENTRY_TEMPLATE, SiteTemplates, TemplateFailure } from '../../src/site-content/site-templates.ts'

/** Counts Liquid parses while `run` runs. */
async function parses(run: () => Promise<void>): Promise<number> {
  const original = Liquid.prototype.parse
  let count = 0
  Liquid.prototype.parse = function (this: Liquid, ...args: Parameters<Liquid['parse']>) {
    count++
    return original.apply(this, args)
  }
  try {
    await run()
  } finally {
    Liquid.prototype.parse = original
  }
  return count
}

const context = (title: string) => ({ entry: { title, publishedAt: '2024-01-01T00:00:00Z', fields: [] }, collection: { label: 'Posts' } })

describe('site templates', () => {
  test('a version parses each of its templates once, and a template that does not parse is not parsed again', async () => {
    const templates = new SiteTemplates(
      new Map([
        ['posts.html', '<h1>{{ entry.title }}</h1>'],
        ['notes.html', '<p>{% if entry.title %}never closed</p>'],
      ]),
    )
    const count = await parses(async () => {
      for (let i = 0; i < 5; i++) {
        assert.equal((await templates.render('posts.html', DEFAULT_ENTRY_TEMPLATE, context(`T${i}`))).html, `<h1>T${i}</h1>`)
        await assert.rejects(
          templates.render('notes.html', DEFAULT_ENTRY_TEMPLATE, context('x')),
          (e) => e instanceof TemplateFailure && /_templates\/notes\.html/.test(e.message),
        )
      }
    })
    assert.equal(count, 2)
  })

  test('the default templates are parsed once for every version', async () => {
    const count = await parses(async () => {
      for (let i = 0; i < 3; i++) {
        const rendered = await new SiteTemplates(new Map()).render('posts.html', DEFAULT_ENTRY_TEMPLATE, context(`Default ${i}`))
        assert.match(rendered.html, new RegExp(`<h1>Default ${i}</h1>`))
        assert.equal(rendered.template, 'default entry template')
      }
    })
    assert.ok(count <= 1, `${count} parses`)
  })
})
