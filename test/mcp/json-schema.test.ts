import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CONTENT_SCHEMAS, EntryBatchRequestSchema } from '../../src/content/content.schemas.ts'
import { mergeClientOnlyConstraints, SHARED_SCHEMAS } from '../../src/core/schemas.ts'
import { EDITING_SCHEMAS } from '../../src/editing/editing.schemas.ts'
import { resultShape, schemaRegistry, selfContained, withoutRepeatedDescriptions } from '../../src/mcp/json-schema.ts'
import { allowedOrigins } from '../../src/http/origins.ts'
import { PublishFileSchema } from '../../src/publishing/publishing.schemas.ts'
import { BUNDLE_LIMITS } from '../../src/core/limits.ts'
import { publishRequestSchemas, websiteSchemas } from '../../src/websites/websites.schemas.ts'

const publish = publishRequestSchemas(BUNDLE_LIMITS)
const { PublishVersionRequestSchema } = publish

describe('selfContained: named schemas inlined for MCP clients', () => {
  const registry = schemaRegistry([...SHARED_SCHEMAS, ...EDITING_SCHEMAS, ...websiteSchemas(publish), ...CONTENT_SCHEMAS])

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

  it('inlines the named schemas a stated constraint points at, so clients see them whole', () => {
    const shown = mergeClientOnlyConstraints(selfContained(EntryBatchRequestSchema, registry)) as any
    assert.equal(JSON.stringify(shown).includes('$ref'), false)
    assert.deepEqual(shown.properties.entries.items.required, ['slug', 'data'])
    assert.equal(shown.properties.entries.maxItems, 100)
  })

  it('gives a named schema a result holds more than once once, under its own $defs, and inlines the rest', () => {
    const site = selfContained(
      {
        type: 'object',
        properties: {
          current: { anyOf: [{ $ref: 'Warning#' }, { type: 'null' }] },
          all: { type: 'array', items: { $ref: 'Warning#' } },
          one: { $ref: 'JobStatus#' },
          noted: { $ref: 'Warning#', description: 'Mine.' },
        },
      },
      registry,
      { shareRepeated: true },
    ) as any
    assert.deepEqual(site.properties.current.anyOf[0], { $ref: '#/$defs/Warning' })
    assert.deepEqual(site.properties.all.items, { $ref: '#/$defs/Warning' })
    assert.deepEqual(Object.keys(site.$defs), ['Warning'], 'a schema held once is inlined')
    assert.equal(site.$defs.Warning.properties.code.type, 'string')
    assert.equal(site.properties.one.enum.length > 0, true)
    assert.equal(site.properties.noted.description, 'Mine.', 'a reference with keywords beside it is inlined, as before')
    assert.deepEqual(JSON.stringify(site).match(/"\$ref":"[^"]*"/g), ['"$ref":"#/$defs/Warning"', '"$ref":"#/$defs/Warning"'], 'nothing from outside')

    // Inside a shared schema, what it holds is counted once: held twice only through it, it is not shared on its own.
    const nested = schemaRegistry([...registry.values(), { $id: 'Pair', type: 'object', properties: { w: { $ref: 'Warning#' } } }])
    const twice = selfContained({ type: 'object', properties: { a: { $ref: 'Pair#' }, b: { $ref: 'Pair#' } } }, nested, { shareRepeated: true }) as any
    assert.deepEqual(Object.keys(twice.$defs), ['Pair'])
    assert.equal(twice.$defs.Pair.properties.w.type, 'object')
  })

  it('fails at startup on an unknown or circular reference', () => {
    assert.throws(() => selfContained({ type: 'object', properties: { x: { $ref: 'Missing#' } } }, registry), /Missing#/)
    const loop = schemaRegistry([{ $id: 'Loop', type: 'object', properties: { next: { $ref: 'Loop#' } } }])
    assert.throws(() => selfContained({ $ref: 'Loop#' }, loop), /refers to itself/)
  })
})

describe('lean tool schemas', () => {
  it('keeps the shape of a result schema: no prose, no value limits, nullable types as a list', () => {
    const schema = {
      type: 'object',
      description: 'A thing.',
      required: ['id', 'note', 'description'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', pattern: '^x', minLength: 1, description: 'Its id.' },
        note: { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'null' }] },
        // A property may be called description: only the keyword is prose.
        description: { type: 'object', patternProperties: { '^.*$': {} }, examples: [{}] },
        kind: { enum: ['a', 'b'], default: 'a' },
      },
    }
    assert.deepEqual(resultShape(schema), {
      type: 'object',
      required: ['id', 'note', 'description'],
      properties: { id: { type: 'string' }, note: { type: ['string', 'null'] }, description: { type: 'object' }, kind: { enum: ['a', 'b'] } },
    })
  })

  it('gives each field description once across the tools, in list order', () => {
    const said = new Set<string>()
    const websiteId = { type: 'string', description: 'Website id (web_...).' }
    const first = withoutRepeatedDescriptions({ type: 'object', properties: { websiteId, name: { type: 'string', description: 'Name.' } } }, said)
    const second = withoutRepeatedDescriptions({ type: 'object', properties: { websiteId, slug: { type: 'string', description: 'Slug.' } } }, said)
    assert.deepEqual((first as any).properties.websiteId, websiteId)
    assert.deepEqual((second as any).properties, { websiteId: { type: 'string' }, slug: { type: 'string', description: 'Slug.' } })
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
