/**
 * MCP tool schemas are single JSON Schema documents: a client has no registry to resolve
 * `{ $ref: 'PublishFile#' }` against. This turns a TypeBox schema that points at named schemas
 * into a self-contained one by inlining every target from the registered list, so a tool
 * declares exactly the schema its REST twin validates with, never a second copy of it. The tool
 * list carries them lean: result schemas as their shape, each field description once.
 */

import { CLIENT_ONLY_KEYWORD } from '../core/schemas.ts'

type Json = Record<string, unknown>

/** Keywords whose value is one subschema (`items` may also be a draft-07 tuple list). */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
])
/** Keywords whose value is a list of subschemas. */
const SCHEMA_LIST_KEYWORDS = new Set(['anyOf', 'allOf', 'oneOf', 'prefixItems'])
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])

/** Named schemas by `$id`, as registered with `app.addSchema`. */
export type SchemaRegistry = ReadonlyMap<string, Json>

export function schemaRegistry(schemas: Iterable<unknown>): SchemaRegistry {
  const registry = new Map<string, Json>()
  for (const schema of schemas) {
    const id = (schema as Json).$id
    if (typeof id === 'string') registry.set(id, schema as Json)
  }
  return registry
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A copy of `schema` with every `{ $ref: 'Name#' }` replaced by the named schema (keywords beside
 * the `$ref` win) and every `$id` dropped, so that the result resolves nothing from outside.
 * Data-valued keywords (enum, const, default, examples) are copied untouched. Throws on a
 * reference that names no registered schema, or on a cycle, at startup rather than per call.
 */
export function selfContained(schema: unknown, registry: SchemaRegistry): Json {
  const resolved = inline(schema, registry, [])
  if (!isObject(resolved)) throw new Error('A tool schema must be a JSON Schema object')
  return resolved
}

function inline(schema: unknown, registry: SchemaRegistry, trail: string[]): unknown {
  if (!isObject(schema)) return schema
  const { $ref, $id: _id, ...rest } = schema
  if (typeof $ref === 'string') {
    const name = /^([^#]+)#$/.exec($ref)?.[1]
    const target = name === undefined ? undefined : registry.get(name)
    if (name === undefined || target === undefined) throw new Error(`Cannot inline $ref "${$ref}": no registered schema has this $id`)
    if (trail.includes(name)) throw new Error(`Cannot inline $ref "${$ref}": the schema refers to itself (${[...trail, name].join(' -> ')})`)
    const base = inline(target, registry, [...trail, name]) as Json
    return { ...base, ...(inline(rest, registry, trail) as Json) }
  }
  const out: Json = {}
  for (const [key, value] of Object.entries(rest)) {
    const list = SCHEMA_LIST_KEYWORDS.has(key) || SCHEMA_KEYWORDS.has(key)
    if (list && Array.isArray(value)) out[key] = value.map((item) => inline(item, registry, trail))
    else if (SCHEMA_KEYWORDS.has(key)) out[key] = inline(value, registry, trail)
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, inline(sub, registry, trail)]))
    } else if (key === CLIENT_ONLY_KEYWORD) {
      // Client-only constraints are schema keywords too (e.g. items: { $ref: 'EntryInput#' }): they are shown to clients.
      out[key] = inline(value, registry, trail)
    } else out[key] = structuredClone(value)
  }
  return out
}

/** Keywords that explain a schema to a reader and take no part in validation. */
const PROSE_KEYWORDS = new Set(['description', 'examples', 'title', 'deprecated'])
/**
 * Keywords a client checking a result does without: limits a result never breaks, and whether
 * other properties may appear (new result fields are additions a client should accept anyway).
 */
const RESULT_CONSTRAINTS = new Set([
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minimum',
  'maximum',
  'minProperties',
  'default',
  'additionalProperties',
])

/** A record of unknown values spells a plain object: `patternProperties` whose every value is `{}`. */
const isAnyValueRecord = (key: string, value: unknown) =>
  key === 'patternProperties' && isObject(value) && Object.values(value).every((sub) => isObject(sub) && Object.keys(sub).length === 0)

/** A copy of `schema` with `visit` applied to every subschema, deepest first. */
function mapSubschemas(schema: unknown, visit: (schema: Json) => Json): unknown {
  if (!isObject(schema)) return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    const list = SCHEMA_LIST_KEYWORDS.has(key) || SCHEMA_KEYWORDS.has(key)
    if (list && Array.isArray(value)) out[key] = value.map((item) => mapSubschemas(item, visit))
    else if (SCHEMA_KEYWORDS.has(key)) out[key] = mapSubschemas(value, visit)
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, mapSubschemas(sub, visit)]))
    } else out[key] = value
  }
  return visit(out)
}

/**
 * The shape of a self-contained output schema: types, properties, required and enums, without
 * prose or value constraints, and `anyOf` of bare types (a nullable string) as a type list. A
 * result is checked against its shape; what it means is said once, in the tool's description,
 * instead of in every tool that returns the same named schema.
 */
export function resultShape(schema: Json): Json {
  return mapSubschemas(schema, (node) => {
    const out = Object.fromEntries(
      Object.entries(node).filter(([key, value]) => !PROSE_KEYWORDS.has(key) && !RESULT_CONSTRAINTS.has(key) && !isAnyValueRecord(key, value)),
    )
    const branches = out.anyOf
    const bareTypes = Array.isArray(branches) && branches.every((b) => isObject(b) && Object.keys(b).length === 1 && typeof b.type === 'string')
    if (!bareTypes || Object.keys(out).length !== 1) return out
    return { type: (branches as Json[]).map((b) => b.type) }
  }) as Json
}

/**
 * A copy of an input schema without the descriptions `said` already holds, adding its own to it.
 * Tools share fields (a website id, a bundle file, a collection field): passed the same set for
 * every tool in list order, each description is given once, by the first tool that has it.
 */
export function withoutRepeatedDescriptions(schema: Json, said: Set<string>): Json {
  return mapSubschemas(schema, (node) => {
    if (typeof node.description !== 'string') return node
    if (!said.has(node.description)) {
      said.add(node.description)
      return node
    }
    const { description: _repeated, ...rest } = node
    return rest
  }) as Json
}
