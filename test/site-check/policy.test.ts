/**
 * BLOCKED_BY_POLICY and MIXED_CONTENT in a publish's warnings: what the Content-Security-Policy
 * Plinth serves makes browsers refuse, derived from that policy (core/site-policy.ts) so the two
 * never disagree, each at its file and line; a plain-http resource on an https site.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { policyAllowsOtherOrigins, policyDirective, SITE_POLICY, SITE_POLICY_ALLOWS_EVAL } from '../../src/core/site-policy.ts'
import { page, siteWarnings, triples } from '../helpers/site-check.ts'

describe('BLOCKED_BY_POLICY', () => {
  test('code from strings, a <base> and a manifest on another origin: each at its line, naming the directive served', async () => {
    const files = [
      page(
        'index.html',
        [
          '<link rel="manifest" href="https://cdn.example/app.webmanifest">',
          '<base href="https://cdn.example/">',
          '<script>',
          '  const ok = 1',
          "  setTimeout('tick()', 10)",
          '</script>',
          '<script src="app.js"></script>',
        ].join('\n'),
      ),
      { path: 'app.js', content: 'const a = 1\nconst f = new Function("return 1")' },
    ]
    const warnings = await siteWarnings(files)
    assert.deepEqual(triples(warnings), [
      ['BLOCKED_BY_POLICY', 'index.html', 1],
      ['BLOCKED_BY_POLICY', 'index.html', 2],
      ['BLOCKED_BY_POLICY', 'index.html', 5],
      ['BLOCKED_BY_POLICY', 'app.js', 2],
    ])
    assert.ok(warnings[0]!.message.includes(policyDirective('manifest-src')), warnings[0]!.message)
    assert.ok(warnings[1]!.message.includes(`base-uri ${SITE_POLICY['base-uri']!.join(' ')}`), warnings[1]!.message)
    assert.ok(warnings[2]!.message.includes(`script-src ${SITE_POLICY['script-src']!.join(' ')}`), warnings[2]!.message)
  })

  test('the warnings follow the policy: it refuses eval, other-origin bases and manifests', () => {
    assert.equal(SITE_POLICY_ALLOWS_EVAL, false)
    assert.equal(policyAllowsOtherOrigins('base-uri'), false)
    assert.equal(policyAllowsOtherOrigins('manifest-src'), false, 'manifest-src falls back to default-src')
    assert.equal(policyAllowsOtherOrigins('img-src'), true, 'images may come from other origins: no warning for them')
    assert.equal(policyDirective('manifest-src'), "default-src 'self'")
  })
})

describe('MIXED_CONTENT', () => {
  test('a plain-http image on an https site, at its line; nothing on an http site', async () => {
    const files = [page('index.html', '<p>hi</p>\n<img src="http://img.example/a.png" alt="">')]
    assert.deepEqual(triples(await siteWarnings(files, { httpsSites: true })), [['MIXED_CONTENT', 'index.html', 2]])
    assert.deepEqual(await siteWarnings(files), [])
  })
})
