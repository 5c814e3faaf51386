/**
 * MCP tool schemas are single JSON Schema documents: a client has no registry to resolve
 * `{ $ref: 'PublishFile#' }` against. This turns a TypeBox schema that points at named schemas
 * into a self-contained one by inlining every target from the registered list, so a tool
 * declares exactly the schema its REST twin validates with, never a second copy of it.
 */

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
    } else out[key] = structuredClone(value)
  }
  return out
}
