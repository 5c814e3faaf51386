import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { inspect } from 'node:util'
import { Liquid } from 'liquidjs'
import { WorkerPool } from '../../src/core/worker-pool.ts'
import { TemplatePool } from '../../src/site-content/site-templates.pool.ts'
import type { TemplateTask } from '../../src/site-content/site-templates.thread.ts'
import { DEFAULT_ENTRY_TEMPLATE, DEFAULT_LIST_TEMPLATE, SafeHtml, SiteTemplates, TemplateFailure } from '../../src/site-content/site-templates.ts'
import { useCompiledThreadModules } from '../helpers/build.ts'

await useCompiledThreadModules()

/** Counts Liquid parses while `run` runs. */
async function parses(run: () => Promise<void>): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back afterwards, and called with the engine as `this`
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

/** The tasks sent to template threads while `run` runs: whether each carried the version's sources. */
async function tasksSent(run: () => Promise<void>): Promise<Array<'sources' | 'none'>> {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back afterwards, and called with the pool as `this`
  const original = WorkerPool.prototype.run
  const sent: Array<'sources' | 'none'> = []
  WorkerPool.prototype.run = function <T>(this: WorkerPool, message: object): Promise<T> {
    const { task } = message as { task?: TemplateTask }
    if (task !== undefined) sent.push(task.files === undefined ? 'none' : 'sources')
    return original.call(this, message) as Promise<T>
  }
  try {
    await run()
  } finally {
    WorkerPool.prototype.run = original
  }
  return sent
}

/**
 * A render that outgrows any heap: each listed entry holds a large value, and the template copies
 * it into an array that doubles on every turn of the loop.
 */
const HUNGRY =
  '{% assign all = "" | split: "," %}{% for i in (1..100000) %}{% for e in entries %}{% assign all = all | push: e.data.text | concat: all %}{% endfor %}{% endfor %}'
const hungryContext = () => ({ ...context('x'), entries: [{ data: { text: 'x'.repeat(1_000_000) } }] })

/** A pool whose time limit (and LiquidJS's share of it) is far beyond any render here, so only the 64 MiB heap limit can stop one. */
const heapLimitedPool = () => new TemplatePool({ threads: 1, timeLimitMs: 10 * 60_000, memoryMb: 64, idleTimeoutMs: 1000 })

describe('the template pool', () => {
  test('renders in a thread exactly as in the process: rich text as HTML, everything else escaped', async () => {
    const pool = new TemplatePool({ threads: 1, timeLimitMs: 30_000, memoryMb: 128, idleTimeoutMs: 1000 })
    try {
      const files = new Map([
        ['posts.html', '<h1>{{ entry.title }}</h1>{{ entry.data.body }}{% for f in entry.fields %}[{{ f.value }}]{% endfor %}{% render "foot" %}'],
        ['foot.html', '<footer>{{ "<b>" }}</footer>'],
      ])
      const body = new SafeHtml('<p>Body <em>text</em></p>')
      const context = {
        site: { slug: 'demo' },
        collection: { label: 'Posts', fields: [] },
        entry: {
          title: 'A <b>title</b>',
          publishedAt: '2024-01-01T00:00:00Z',
          data: { body, note: '<i>not rich</i>' },
          fields: [
            { name: 'body', type: 'richText', value: body },
            { name: 'note', type: 'text', value: '<i>not rich</i>' },
            { name: 'count', type: 'number', value: 3 },
          ],
        },
      }
      const inProcess = await new SiteTemplates(files).render('posts.html', DEFAULT_ENTRY_TEMPLATE, context)
      const pooled = await pool.version('ver_1', files).render('posts.html', DEFAULT_ENTRY_TEMPLATE, context)
      assert.deepEqual(pooled, inProcess)
      assert.equal(
        pooled.html,
        '<h1>A &lt;b&gt;title&lt;/b&gt;</h1><p>Body <em>text</em></p>[<p>Body <em>text</em></p>][&lt;i&gt;not rich&lt;/i&gt;][3]<footer>&lt;b&gt;</footer>',
      )
      for (const name of ['posts.html', 'posts-list.html']) {
        const fallback = name === 'posts.html' ? DEFAULT_ENTRY_TEMPLATE : DEFAULT_LIST_TEMPLATE
        const list = { ...context, entries: [context.entry], pagination: { page: 1, pages: 1 } }
        assert.deepEqual(await pool.version('ver_2', new Map()).render(name, fallback, list), await new SiteTemplates(new Map()).render(name, fallback, list))
      }
      await assert.rejects(
        pool.version('ver_3', new Map([['posts.html', '{% render "missing" %}']])).render('posts.html', DEFAULT_ENTRY_TEMPLATE, context),
        (e) => e instanceof TemplateFailure && e.template === '_templates/posts.html' && /missing/.test(e.message),
      )
    } finally {
      await pool.close()
    }
  })

  test("a version's sources go to a thread once; a thread that was replaced is sent them again", async () => {
    const pool = heapLimitedPool()
    try {
      const files = new Map([
        ['posts.html', '<h1>{{ entry.title }}</h1>'],
        ['hungry.html', HUNGRY],
      ])
      const version = pool.version('ver_1', files)
      const sent = await tasksSent(async () => {
        for (let i = 0; i < 4; i++) assert.equal((await version.render('posts.html', DEFAULT_ENTRY_TEMPLATE, context(`T${i}`))).html, `<h1>T${i}</h1>`)
      })
      assert.deepEqual(sent, ['none', 'sources', 'none', 'none', 'none'], 'asked without sources, sent them once the thread said it lacks them')
      // A render over the heap limit ends its thread: its replacement has nothing yet.
      await assert.rejects(
        version.render('hungry.html', DEFAULT_ENTRY_TEMPLATE, hungryContext()),
        (e) => e instanceof TemplateFailure && e.template === '_templates/hungry.html' && /more than 64 MiB/.test(e.message),
      )
      const again = await tasksSent(async () => {
        assert.equal((await version.render('posts.html', DEFAULT_ENTRY_TEMPLATE, context('After'))).html, '<h1>After</h1>')
      })
      assert.deepEqual(again, ['none', 'sources'])
    } finally {
      await pool.close()
    }
  })

  test('a render over the heap limit fails like a broken template, and the pool goes on', async () => {
    const pool = heapLimitedPool()
    try {
      const version = pool.version('ver_1', new Map([['posts-list.html', HUNGRY]]))
      const rejected = await version.render('posts-list.html', DEFAULT_LIST_TEMPLATE, hungryContext()).then(
        (rendered) => rendered,
        (e: unknown) => e,
      )
      assert.ok(rejected instanceof TemplateFailure, inspect(rejected))
      assert.equal(rejected.template, '_templates/posts-list.html')
      assert.match(rejected.message, /^The template _templates\/posts-list\.html could not be rendered: it needed more than 64 MiB of memory/)
      assert.match((await pool.version('ver_2', new Map()).render('posts.html', DEFAULT_ENTRY_TEMPLATE, context('Still here'))).html, /<h1>Still here<\/h1>/)
    } finally {
      await pool.close()
    }
  })
})
