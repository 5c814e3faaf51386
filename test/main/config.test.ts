import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'

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
})
