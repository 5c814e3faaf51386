import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AppError } from '../../src/core/errors.ts'
import { EDIT_READ_MAX_CHARS, TEXT_DIFF_LIMITS } from '../../src/core/limits.ts'
import { changeOfEachFile, compareFiles, textDiff } from '../../src/editing/file-changes.ts'
import { fileContent } from '../../src/editing/file-views.ts'
import { applyEdits, EditBudget, type TextEdit } from '../../src/editing/text-edits.ts'

const refusal = async (run: () => Promise<unknown>): Promise<AppError> => {
  try {
    await run()
  } catch (error) {
    assert.ok(error instanceof AppError)
    return error
  }
  assert.fail('expected a refusal')
}

const edit = (path: string, text: string, edits: TextEdit[], budget = new EditBudget(), quote = true) => applyEdits(path, text, edits, { budget, quote })

describe('exact-text edits', () => {
  const page = '<h1>Menu</h1>\n<p>Soup of the day</p>\n<p>Bread</p>\n<p>Bread</p>\n'

  test('each edit replaces the one place its oldText occurs, in order', async () => {
    const edited = await edit('index.html', page, [
      { oldText: 'Soup of the day', newText: 'Soup of the week' },
      { oldText: 'of the week', newText: 'of the month' },
    ])
    assert.equal(edited, '<h1>Menu</h1>\n<p>Soup of the month</p>\n<p>Bread</p>\n<p>Bread</p>\n')
  })

  test('no match is EDIT_NO_MATCH naming the edit, the file and the closest line', async () => {
    const error = await refusal(() =>
      edit('index.html', page, [
        { oldText: '<h1>Menu</h1>', newText: '<h1>Carte</h1>' },
        { oldText: '<p>Soup of teh day</p>', newText: 'x' },
      ]),
    )
    assert.equal(error.code, 'EDIT_NO_MATCH')
    assert.match(error.message, /^Edit 2 of 2: its oldText occurs 0 times in index\.html; the closest line is 2: "<p>Soup of the day<\/p>"/)
    assert.deepEqual(error.fields, { 'edits[1].oldText': 'occurs 0 times in index.html' })
  })

  test('several matches are EDIT_AMBIGUOUS with the count', async () => {
    const error = await refusal(() => edit('index.html', page, [{ oldText: '<p>Bread</p>', newText: '<p>Rolls</p>' }]))
    assert.equal(error.code, 'EDIT_AMBIGUOUS')
    assert.match(error.message, /occurs 2 times in index\.html/)
  })

  test('an empty oldText is a validation failure', async () => {
    assert.equal((await refusal(() => edit('a.css', 'body{}', [{ oldText: '', newText: 'x' }]))).code, 'VALIDATION_FAILED')
  })

  test('a miss for a caller who may not read names the closest line by its number only', async () => {
    const error = await refusal(() => edit('index.html', page, [{ oldText: '<p>Soup of teh day</p>', newText: 'x' }], new EditBudget(), false))
    assert.match(error.message, /the closest line is 2 \(its text is shown to tokens that may read\)/)
    assert.doesNotMatch(error.message, /Soup/)
  })

  test('a line with nothing in common is not offered as the closest', async () => {
    assert.match((await refusal(() => edit('a.txt', 'aaaa\n', [{ oldText: 'zzzz', newText: 'y' }]))).message, /a\.txt has no similar line/)
  })

  test('the edits of one request read at most EDIT_READ_MAX_CHARS of text in all, across files, and give the event loop turns meanwhile', async () => {
    // Each edit reads its whole file: 8 edits of an eighth of the budget fill it exactly.
    const big = `${'a'.repeat(EDIT_READ_MAX_CHARS / 8 - 1)}X`
    const swaps = (n: number) => Array.from({ length: n }, () => ({ oldText: 'X', newText: 'X' }))
    const budget = new EditBudget()
    // Queued before the edits: it runs only if they give the event loop a turn before they end.
    let otherWork = false
    setImmediate(() => (otherWork = true))
    assert.equal(await edit('big.txt', big, swaps(4), budget), big)
    assert.ok(otherWork, 'other work ran between the edits')
    assert.equal(await edit('other.txt', big, swaps(4), budget), big)
    const error = await refusal(() => edit('third.txt', big, swaps(1), budget))
    assert.equal(error.code, 'VALIDATION_FAILED')
    assert.deepEqual(Object.keys(error.fields ?? {}), ['edits[0]'])
    assert.match(
      error.message,
      /would read more than 67,108,864 characters of text in all: each edit reads the whole file it changes \(third\.txt has 8,388,608\)/,
    )
    // A new request has the whole budget again.
    assert.equal(await edit('big.txt', big, swaps(1)), big)
  })
})

describe('comparing files', () => {
  const file = (path: string, hash: string, size = 10) => ({ path, hash, size })

  test('added, removed, changed and moved files, by content hash', () => {
    const before = [file('index.html', 'h1'), file('old.css', 'c1', 5), file('gone.txt', 'g1'), file('same.js', 's1')]
    const after = [file('index.html', 'h2', 12), file('css/new.css', 'c1', 5), file('added.png', 'p1'), file('same.js', 's1')]
    assert.deepEqual(compareFiles(before, after), [
      { path: 'added.png', status: 'added', sizeAfter: 10 },
      { path: 'css/new.css', status: 'moved', previousPath: 'old.css', sizeBefore: 5, sizeAfter: 5 },
      { path: 'gone.txt', status: 'removed', sizeBefore: 10 },
      { path: 'index.html', status: 'changed', sizeBefore: 10, sizeAfter: 12 },
    ])
    assert.deepEqual(Object.fromEntries(changeOfEachFile(before, after)), {
      'index.html': 'changed',
      'css/new.css': 'moved',
      'added.png': 'added',
      'same.js': 'unchanged',
    })
  })

  test('a unified diff of a changed text, and "truncated" past the limits', () => {
    assert.deepEqual(textDiff('a.txt', 'one\ntwo\n', 'one\n2\n', TEXT_DIFF_LIMITS), { diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n' })
    const big = 'x\n'.repeat(TEXT_DIFF_LIMITS.maxInputBytes)
    assert.deepEqual(textDiff('a.txt', big, 'y', TEXT_DIFF_LIMITS), { diffTruncated: true })
    const many = (tag: string) => Array.from({ length: 6000 }, (_, i) => `${tag}${i}`).join('\n')
    assert.deepEqual(textDiff('a.txt', many('a'), many('b'), TEXT_DIFF_LIMITS), { diffTruncated: true })
  })
})

describe('reading a stored file', () => {
  const ref = { path: 'index.html', hash: 'ab', size: 0, contentType: 'text/html' }

  test('text whole, or a range of lines with where it sits', () => {
    const bytes = Buffer.from('l1\nl2\nl3\nl4\n')
    assert.equal(fileContent(ref, bytes).content, 'l1\nl2\nl3\nl4\n')
    assert.deepEqual(fileContent(ref, bytes, { offset: 2, limit: 2 }), {
      path: 'index.html',
      size: 0,
      sha256: 'ab',
      contentType: 'text/html',
      contentEncoding: 'utf8',
      content: 'l2\nl3\n',
      lines: { from: 2, to: 3, total: 4 },
    })
    assert.deepEqual(fileContent(ref, bytes, { offset: 9 }).lines, { from: 9, to: 8, total: 4 })
  })

  test('binaries and text that is not UTF-8 come back as base64', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47])
    assert.deepEqual(fileContent({ ...ref, path: 'a.png', contentType: 'image/png' }, png), {
      path: 'a.png',
      size: 0,
      sha256: 'ab',
      contentType: 'image/png',
      contentEncoding: 'base64',
      content: png.toString('base64'),
    })
    assert.equal(fileContent(ref, Buffer.from([0xff, 0xfe, 0x41])).contentEncoding, 'base64')
  })
})
