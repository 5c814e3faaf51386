/**
 * MCP tool schemas are single JSON Schema documents: a client has no registry to resolve
 * `{ $ref: 'PublishFile#' }` against. This turns a TypeBox schema that points at named schemas
 * into a self-contained one by inlining every target from the registered list, so a tool
 * declares exactly the schema its REST twin validates with, never a second copy of it. The tool
 * list carries them lean: result schemas as their shape, each field description once, and a named
 * schema a result holds more than once (a website's versions and its current version) given once,
 * under the schema's own `$defs`.
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
 *
 * With `shareRepeated`, a named schema the result would hold more than once (and that is referred
 * to without keywords beside the `$ref`) is held once, in the result's `$defs`, and referred to
 * there (`#/$defs/Name`): still nothing from outside.
 */
export function selfContained(schema: unknown, registry: SchemaRegistry, { shareRepeated = false }: { shareRepeated?: boolean } = {}): Json {
  const shared = shareRepeated ? repeatedNames(schema, registry) : new Set<string>()
  const defs: Json = {}
  const resolved = inline(schema, registry, [], shared, defs)
  if (!isObject(resolved)) throw new Error('A tool schema must be a JSON Schema object')
  return Object.keys(defs).length === 0 ? resolved : { ...resolved, $defs: defs }
}

/** A bare reference to a named schema: `{ $ref: 'Name#' }` with no keyword beside it. */
function bareRefName(schema: Json): string | undefined {
  if (Object.keys(schema).length !== 1 || typeof schema.$ref !== 'string') return undefined
  return /^([^#]+)#$/.exec(schema.$ref)?.[1]
}

/**
 * The names referred to bare more than once in the schema as it would be written out, each shared
 * one written once: found by counting with the shared names so far written once, until the set no
 * longer changes (a name shared only inside another shared one is then counted once).
 */
function repeatedNames(schema: unknown, registry: SchemaRegistry): Set<string> {
  let shared = new Set<string>()
  for (let round = 0; round < 8; round++) {
    const counts = new Map<string, number>()
    countBareRefs(schema, registry, shared, counts, [])
    const next = new Set([...counts].filter(([, n]) => n > 1).map(([name]) => name))
    if (next.size === shared.size && [...next].every((name) => shared.has(name))) return next
    shared = next
  }
  return shared
}

function countBareRefs(schema: unknown, registry: SchemaRegistry, shared: ReadonlySet<string>, counts: Map<string, number>, trail: string[]): void {
  if (Array.isArray(schema)) {
    for (const item of schema) countBareRefs(item, registry, shared, counts, trail)
    return
  }
  if (!isObject(schema)) return
  const name = bareRefName(schema)
  if (name !== undefined) {
    const seen = counts.get(name) ?? 0
    counts.set(name, seen + 1)
    // A shared schema is written once: what it holds is counted once.
    if ((seen > 0 && shared.has(name)) || trail.includes(name)) return
    countBareRefs(registry.get(name), registry, shared, counts, [...trail, name])
    return
  }
  const { $ref, ...rest } = schema
  if (typeof $ref === 'string') {
    const target = /^([^#]+)#$/.exec($ref)?.[1]
    if (target !== undefined && !trail.includes(target)) countBareRefs(registry.get(target), registry, shared, counts, [...trail, target])
  }
  for (const [key, value] of Object.entries(rest)) {
    if (SCHEMA_KEYWORDS.has(key) || SCHEMA_LIST_KEYWORDS.has(key) || key === CLIENT_ONLY_KEYWORD) countBareRefs(value, registry, shared, counts, trail)
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) countBareRefs(Object.values(value), registry, shared, counts, trail)
  }
}

function inline(schema: unknown, registry: SchemaRegistry, trail: string[], shared: ReadonlySet<string>, defs: Json): unknown {
  if (!isObject(schema)) return schema
  const { $ref, $id: _id, ...rest } = schema
  if (typeof $ref === 'string') {
    const name = /^([^#]+)#$/.exec($ref)?.[1]
    const target = name === undefined ? undefined : registry.get(name)
    if (name === undefined || target === undefined) throw new Error(`Cannot inline $ref "${$ref}": no registered schema has this $id`)
    if (trail.includes(name)) throw new Error(`Cannot inline $ref "${$ref}": the schema refers to itself (${[...trail, name].join(' -> ')})`)
    if (shared.has(name) && Object.keys(rest).length === 0) {
      if (!(name in defs)) {
        defs[name] = {}
        defs[name] = inline(target, registry, [...trail, name], shared, defs)
      }
      return { $ref: `#/$defs/${name}` }
    }
    const base = inline(target, registry, [...trail, name], shared, defs) as Json
    return { ...base, ...(inline(rest, registry, trail, shared, defs) as Json) }
  }
  const out: Json = {}
  for (const [key, value] of Object.entries(rest)) {
    const list = SCHEMA_LIST_KEYWORDS.has(key) || SCHEMA_KEYWORDS.has(key)
    if (list && Array.isArray(value)) out[key] = value.map((item) => inline(item, registry, trail, shared, defs))
    else if (SCHEMA_KEYWORDS.has(key)) out[key] = inline(value, registry, trail, shared, defs)
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, inline(sub, registry, trail, shared, defs)]))
    } else if (key === CLIENT_ONLY_KEYWORD) {
      // Client-only constraints are schema keywords too (e.g. items: { $ref: 'EntryInput#' }): they are shown to clients.
      out[key] = inline(value, registry, trail, shared, defs)
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
