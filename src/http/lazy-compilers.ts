/**
 * Request validators and response serializers compiled on a route's first use instead of at
 * start. Fastify compiles a validator (Ajv) for every request schema and a serializer
 * (fast-json-stringify) for every response schema of every route while the app starts, the
 * largest part of a start's CPU after loading the modules; most routes of an instance are not
 * called for minutes after it starts, many never. Compiled here by Fastify's own compilers (the
 * packages Fastify depends on, resolved from Fastify's folder and loaded on the first compile),
 * with the same schemas and options, so a request is validated and an answer serialized exactly
 * as Fastify's own compile at start would; only the first use pays for the compile.
 */
import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type SerializerBuilder = NonNullable<CompilersFactory['buildSerializer']>
type SerializerCompiler = ReturnType<SerializerBuilder>
type Serializer = ReturnType<SerializerCompiler>
/** Fastify's type for the validator builder names Ajv's `compile(schema)`; what it passes and reads at run time is below. */
type ValidatorBuilder = NonNullable<CompilersFactory['buildValidator']>
interface RouteSchema {
  schema: unknown
  method: string
  url: string
  httpPart?: string
}
type Validator = ((data: unknown, parent?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown }
type RouteValidators = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => Validator

const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))

let serializerBuilder: SerializerBuilder | undefined
const compileSerializers: SerializerBuilder = (externalSchemas, options) =>
  (serializerBuilder ??= (fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerBuilder }).SerializerSelector())(
    externalSchemas,
    options,
  )

let validatorBuilder: RouteValidators | undefined
const compileValidators: RouteValidators = (externalSchemas, options) =>
  (validatorBuilder ??= (fromFastify('@fastify/ajv-compiler') as () => RouteValidators)())(externalSchemas, options)

/** Fastify's `schemaController.compilersFactory.buildSerializer`: the default one, compiling each serializer on its first use. */
export const lazySerializers: SerializerBuilder = (externalSchemas, options) => {
  let compiler: SerializerCompiler | undefined
  return (route) => {
    let serialize: Serializer | undefined
    return (data) => (serialize ??= (compiler ??= compileSerializers(externalSchemas, options))(route))(data)
  }
}

/**
 * Fastify's `schemaController.compilersFactory.buildValidator`: the default one (Ajv), compiling
 * each validator on its first use. Fastify reads two things of a validator besides calling it:
 * `schemaEnv` (an Ajv validator is then given the request as its data's parent, so defaults can
 * be set on the root) and `errors` after a failed call; both are the compiled validator's.
 * Fastify lowercases the header names of a header schema only for its own compiler, so header
 * schemas are refused here rather than validated case-sensitively.
 */
const lazyRouteValidators: RouteValidators = (externalSchemas, options) => {
  let compiler: ReturnType<RouteValidators> | undefined
  return (route) => {
    if (route.httpPart === 'headers') throw new Error(`${route.method} ${route.url}: header schemas are not supported by the lazy validators`)
    let compiled: Validator | undefined
    const now = () => (compiled ??= (compiler ??= compileValidators(externalSchemas, options))(route))
    const validate = (data: unknown, parent?: unknown) => now()(data, parent)
    return Object.defineProperties(validate, {
      schemaEnv: { get: () => now().schemaEnv },
      errors: { get: () => compiled?.errors },
    })
  }
}
export const lazyValidators = lazyRouteValidators as unknown as ValidatorBuilder
