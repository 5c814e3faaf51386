import assert from 'node:assert/strict'
import { test } from 'node:test'
import { collectionOwning, reservedPathProblem, reservedPathsOf } from '../../src/publishing/reserved-paths.ts'

test('a collection reserves {name}-*, {name}, {name}.html, {name}/, {name}.json and {name}.xml at the root only', () => {
  const names = ['posts', 'news']
  for (const path of ['posts-hello.html', 'posts-a/index.html', 'posts', 'posts.html', 'posts.json', 'posts.xml', 'posts/index.html', 'news-1']) {
    assert.ok(reservedPathProblem(path, names), path)
  }
  for (const path of ['postscript.html', 'post.html', 'posts.css', 'about/posts-1.html', 'newsletter.html', 'index.html', 'Posts-1.html']) {
    assert.equal(reservedPathProblem(path, names), null, path)
  }
  assert.equal(collectionOwning('news-posts-1.html', names), 'news', 'the first hyphen decides')
  assert.match(reservedPathProblem('posts.xml', names)!, /collection "posts"/)
  assert.deepEqual(reservedPathsOf('posts'), ['posts-*', 'posts', 'posts.html', 'posts.json', 'posts.xml', 'posts/'])
  assert.equal(reservedPathProblem('posts-1.html', []), null, 'a site without collections reserves nothing')
})
