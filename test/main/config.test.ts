import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { BUNDLE_LIMITS } from '../../src/core/limits.ts'

const load = (env: Record<string, string>) => loadConfig(env, '/srv/plinth')

describe('settings', () => {
  test('blobs live on the filesystem unless PLINTH_BLOB_STORE=s3 says otherwise', () => {
    const config = load({})
    assert.equal(config.blobStore, 'fs')
    assert.equal(config.s3, null)
  })

  test('PLINTH_BLOB_STORE=s3 reads the bucket settings, with us-east-1 and no prefix by default', () => {
    const config = load({ PLINTH_BLOB_STORE: 's3', PLINTH_S3_BUCKET: 'plinth-blobs' })
    assert.deepEqual(config.s3, { bucket: 'plinth-blobs', region: 'us-east-1', endpoint: null, forcePathStyle: false, prefix: '' })
    const minio = load({
      PLINTH_BLOB_STORE: 's3',
      PLINTH_S3_BUCKET: 'plinth',
      PLINTH_S3_REGION: 'eu-west-3',
      PLINTH_S3_ENDPOINT: 'http://127.0.0.1:9000',
      PLINTH_S3_FORCE_PATH_STYLE: 'true',
      PLINTH_S3_PREFIX: 'prod/',
    })
    assert.deepEqual(minio.s3, { bucket: 'plinth', region: 'eu-west-3', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true, prefix: 'prod/' })
  })

  test('PLINTH_TRUST_PROXY lists the proxies whose X-Forwarded-For is believed', () => {
    assert.deepEqual(load({}).trustProxy, [])
    assert.deepEqual(load({ PLINTH_TRUST_PROXY: 'loopback, 10.0.0.0/8 ,2001:db8::1' }).trustProxy, ['loopback', '10.0.0.0/8', '2001:db8::1'])
    assert.throws(() => load({ PLINTH_TRUST_PROXY: 'proxy.example.com' }), /PLINTH_TRUST_PROXY must list IP addresses/)
    assert.throws(() => load({ PLINTH_TRUST_PROXY: '10.0.0.0/99' }), /PLINTH_TRUST_PROXY/)
  })

  test('bad blob store settings are refused, each named, all at once', () => {
    assert.throws(
      () => load({ PLINTH_BLOB_STORE: 's3', PLINTH_S3_BUCKET: 'Bad_Bucket', PLINTH_S3_ENDPOINT: 'ftp://x', PLINTH_S3_FORCE_PATH_STYLE: 'yes' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        for (const name of ['PLINTH_S3_BUCKET', 'PLINTH_S3_ENDPOINT', 'PLINTH_S3_FORCE_PATH_STYLE']) assert.match(error.message, new RegExp(name))
        return true
      },
    )
    assert.throws(() => load({ PLINTH_BLOB_STORE: 'disk' }), /PLINTH_BLOB_STORE must be fs or s3/)
    assert.throws(() => load({ PLINTH_BLOB_STORE: 's3' }), /PLINTH_S3_BUCKET must name a bucket/)
    assert.throws(() => load({ PLINTH_S3_BUCKET: 'plinth' }), /PLINTH_BLOB_STORE is not s3/)
  })

  test("a bundle may hold the interface's limits unless the operator sets others", () => {
    assert.deepEqual(load({}).bundleLimits, BUNDLE_LIMITS)
    assert.deepEqual(load({}).bundleLimits, {
      maxFiles: 40,
      maxHtmlPages: 15,
      maxFileBytes: 2 * 1024 * 1024,
      maxBundleBytes: 8 * 1024 * 1024,
      maxViolations: 100,
    })
    const raised = load({
      PLINTH_MAX_FILES: '200',
      PLINTH_MAX_PAGES: '60',
      PLINTH_MAX_FILE_BYTES: '10485760',
      PLINTH_MAX_BUNDLE_BYTES: '33554432',
    }).bundleLimits
    assert.deepEqual(raised, { maxFiles: 200, maxHtmlPages: 60, maxFileBytes: 10 * 1024 * 1024, maxBundleBytes: 32 * 1024 * 1024, maxViolations: 100 })
    const lowered = load({ PLINTH_MAX_FILES: '10', PLINTH_MAX_PAGES: '1', PLINTH_MAX_FILE_BYTES: '1024', PLINTH_MAX_BUNDLE_BYTES: '65536' }).bundleLimits
    assert.deepEqual(lowered, { maxFiles: 10, maxHtmlPages: 1, maxFileBytes: 1024, maxBundleBytes: 65536, maxViolations: 100 })
    assert.deepEqual(load({ PLINTH_MAX_FILES: '' }).bundleLimits, BUNDLE_LIMITS, 'empty is unset')
    assert.ok(Object.isFrozen(raised))
  })

  test('a bundle limit that is not a whole number within its bounds is refused, each named, all at once', () => {
    const bad: Array<[string, string, RegExp]> = [
      ['PLINTH_MAX_FILES', '0', /PLINTH_MAX_FILES must be a whole number from 1 to 1000, got "0"/],
      ['PLINTH_MAX_FILES', '1001', /PLINTH_MAX_FILES must be a whole number from 1 to 1000, got "1001"/],
      ['PLINTH_MAX_FILES', '40.5', /PLINTH_MAX_FILES/],
      ['PLINTH_MAX_FILES', 'many', /PLINTH_MAX_FILES/],
      ['PLINTH_MAX_PAGES', '-3', /PLINTH_MAX_PAGES must be a whole number from 1 to 1000/],
      ['PLINTH_MAX_FILE_BYTES', '2MB', /PLINTH_MAX_FILE_BYTES must be a whole number from 1024 to 67108864, got "2MB"/],
      ['PLINTH_MAX_FILE_BYTES', '1023', /PLINTH_MAX_FILE_BYTES/],
      ['PLINTH_MAX_BUNDLE_BYTES', String(128 * 1024 * 1024 + 1), /PLINTH_MAX_BUNDLE_BYTES must be a whole number from 1024 to 134217728/],
      ['PLINTH_MAX_BUNDLE_BYTES', '8MiB', /PLINTH_MAX_BUNDLE_BYTES/],
    ]
    for (const [name, value, message] of bad) {
      assert.throws(
        () => load({ [name]: value }),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
        `${name}=${value}`,
      )
    }
    assert.throws(
      () => load({ PLINTH_MAX_FILES: 'x', PLINTH_MAX_PAGES: 'x', PLINTH_MAX_FILE_BYTES: 'x', PLINTH_MAX_BUNDLE_BYTES: 'x' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        for (const name of ['PLINTH_MAX_FILES', 'PLINTH_MAX_PAGES', 'PLINTH_MAX_FILE_BYTES', 'PLINTH_MAX_BUNDLE_BYTES'])
          assert.match(error.message, new RegExp(name))
        return true
      },
    )
  })

  test("the browser's pages have 15 seconds each unless PLINTH_BROWSER_PAGE_SECONDS sets from 3 to 300", () => {
    assert.equal(load({}).browserPageSeconds, 15)
    assert.equal(load({ PLINTH_BROWSER_PAGE_SECONDS: '60' }).browserPageSeconds, 60)
    for (const value of ['2', '301', '7.5', 'slow']) {
      assert.throws(
        () => load({ PLINTH_BROWSER_PAGE_SECONDS: value }),
        (error: unknown) =>
          error instanceof ConfigError && error.message.includes(`PLINTH_BROWSER_PAGE_SECONDS must be a whole number from 3 to 300, got "${value}"`),
        value,
      )
    }
  })
})
