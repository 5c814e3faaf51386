/**
 * Response serializers compiled on a route's first answer instead of at start. Fastify compiles a
 * serializer (fast-json-stringify) for every response schema of every route while the app starts,
 * the largest part of a start's CPU after loading the modules; most routes of an instance are not
 * answered for minutes after it starts, many never. Compiled here by Fastify's own compiler (the
 * package Fastify depends on, resolved from Fastify's folder), with the same schemas and options,
 * so an answer is serialized exactly as Fastify's own compile at start would; only its first use
 * pays for the compile.
 */
import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

type SerializerBuilder = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>
type SerializerCompiler = ReturnType<SerializerBuilder>
type Serializer = ReturnType<SerializerCompiler>

const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))
const { SerializerSelector } = fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerBuilder }
const compileNow = SerializerSelector()

/** Fastify's `schemaController.compilersFactory.buildSerializer`: the default one, compiling each serializer on its first use. */
export const lazySerializers: SerializerBuilder = (externalSchemas, options) => {
  let compiler: SerializerCompiler | undefined
  return (route) => {
    let serialize: Serializer | undefined
    return (data) => (serialize ??= (compiler ??= compileNow(externalSchemas, options))(route))(data)
  }
}
