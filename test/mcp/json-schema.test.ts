import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SHARED_SCHEMAS } from '../../src/core/schemas.ts'
import { schemaRegistry, selfContained } from '../../src/mcp/json-schema.ts'
import { allowedOrigins } from '../../src/mcp/origins.ts'
import { PublishFileSchema } from '../../src/publishing/publishing.schemas.ts'
import { PublishVersionRequestSchema, WEBSITE_SCHEMAS } from '../../src/websites/websites.schemas.ts'

describe('selfContained: named schemas inlined for MCP clients', () => {
  const registry = schemaRegistry([...SHARED_SCHEMAS, ...WEBSITE_SCHEMAS])

  it('inlines the registered schema a $ref names, dropping every $id', () => {
    const schema = selfContained(PublishVersionRequestSchema, registry) as any
    assert.equal(schema.$id, undefined)
    assert.equal(JSON.stringify(schema).includes('$ref'), false)
    assert.deepEqual(schema.properties.files.items, JSON.parse(JSON.stringify({ ...PublishFileSchema, $id: undefined })))
  })

  it('lets keywords beside a $ref win and leaves data keywords alone', () => {
    const schema = selfContained(
      { type: 'object', properties: { a: { $ref: 'PublishViolation#', description: 'Mine.' }, b: { enum: [{ $ref: 'Nope#' }], default: { $ref: 'Nope#' } } } },
      registry,
    ) as any
    assert.equal(schema.properties.a.description, 'Mine.')
    assert.equal(schema.properties.a.type, 'object')
    assert.deepEqual(schema.properties.b, { enum: [{ $ref: 'Nope#' }], default: { $ref: 'Nope#' } })
  })

  it('fails at startup on an unknown or circular reference', () => {
    assert.throws(() => selfContained({ type: 'object', properties: { x: { $ref: 'Missing#' } } }, registry), /Missing#/)
    const loop = schemaRegistry([{ $id: 'Loop', type: 'object', properties: { next: { $ref: 'Loop#' } } }])
    assert.throws(() => selfContained({ $ref: 'Loop#' }, loop), /refers to itself/)
  })
})

describe('allowedOrigins: the DNS-rebinding allowlist', () => {
  it('holds the API and site origins exactly, and every loopback spelling of a local one', () => {
    assert.deepEqual(
      [...allowedOrigins({ baseUrl: 'https://api.example.com', siteUrl: 'https://example.com' })],
      ['https://api.example.com', 'https://example.com'],
    )
    assert.deepEqual(
      [...allowedOrigins({ baseUrl: 'http://localhost:8080', siteUrl: 'http://localhost:8080' })],
      ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080'],
    )
  })
})
