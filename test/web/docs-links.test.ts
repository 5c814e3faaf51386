/**
 * Every link between the README and the documentation leads somewhere: a relative link names a
 * file that exists, and its `#anchor` a heading of that file, with the ids the web site gives
 * headings (which are GitHub's, so the same links work in the repository).
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import MarkdownIt from 'markdown-it'
import { headingIds } from '../../src/web/docs.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const markdownFiles = (folder: string) =>
  readdirSync(path.join(ROOT, folder))
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join(folder, name))
const FILES = ['README.md', ...markdownFiles('docs'), ...markdownFiles('docs/guide')]

const parser = new MarkdownIt({ html: false, linkify: false })

/** The targets of a markdown file's links and images, as written. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = []
  for (const block of parser.parse(markdown, {})) {
    for (const token of block.children ?? []) {
      const target = token.type === 'link_open' ? token.attrGet('href') : token.type === 'image' ? token.attrGet('src') : null
      if (target !== null) targets.push(String(target))
    }
  }
  return targets
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')

const idsOf = new Map<string, Set<string>>()
const anchorsOf = (file: string) => {
  if (!idsOf.has(file)) idsOf.set(file, new Set(headingIds(readFileSync(path.join(ROOT, file), 'utf8'))))
  return idsOf.get(file)!
}

describe('documentation links', () => {
  test('the README and docs/ hold links to check', () => {
    assert.ok(FILES.includes('docs/guide/self-hosting.md') && FILES.includes('docs/architecture.md'))
    assert.ok(linkTargets(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).some((target) => target.startsWith('docs/')))
  })

  for (const file of FILES) {
    test(`${file}: every relative link and anchor resolves`, () => {
      const broken: string[] = []
      for (const target of linkTargets(readFileSync(path.join(ROOT, file), 'utf8'))) {
        if (isExternal(target)) continue
        const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined]
        if (pathPart.startsWith('/')) {
          broken.push(`${target} (a path from the site's root; link to the file relatively)`)
          continue
        }
        const targetFile = pathPart === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(pathPart)))
        if (!existsSync(path.join(ROOT, targetFile))) {
          broken.push(`${target} (no file ${targetFile})`)
          continue
        }
        if (anchor === undefined) continue
        if (!targetFile.endsWith('.md') || statSync(path.join(ROOT, targetFile)).isDirectory()) {
          broken.push(`${target} (an anchor into a file that is not markdown)`)
          continue
        }
        if (!anchorsOf(targetFile).has(decodeURIComponent(anchor))) broken.push(`${target} (no heading #${anchor} in ${targetFile})`)
      }
      assert.deepEqual(broken, [], `broken links in ${file}`)
    })
  }
})

describe('heading ids', () => {
  test('are those GitHub gives: lowercase, punctuation dropped but - and _, spaces to -', () => {
    const cases: [string, string][] = [
      ['Install and start', 'install-and-start'],
      ['Coming from Netlify or Cloudflare Pages', 'coming-from-netlify-or-cloudflare-pages'],
      ['`_redirects` and `_headers`', '_redirects-and-_headers'],
      ['Rich text in worker threads, and why 250,000 characters', 'rich-text-in-worker-threads-and-why-250000-characters'],
      ['1. Create an account', '1-create-an-account'],
      ['Preview, promote, roll back', 'preview-promote-roll-back'],
      ['Hosts & URLs (v2.0) / notes', 'hosts--urls-v20--notes'],
      ['Café déjà vu', 'café-déjà-vu'],
    ]
    for (const [heading, id] of cases) {
      assert.equal(headingIds(`# ${heading}\n`)[0], id, heading)
    }
  })

  test('a repeated heading gets -1, -2 as on GitHub', () => {
    assert.deepEqual(headingIds('# Notes\n\n## Notes\n\n## Notes\n'), ['notes', 'notes-1', 'notes-2'])
  })
})
