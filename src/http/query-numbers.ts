import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/** An integer as a query spells it: negative ones too, so the schema can say what range it wants; no more digits than a safe integer has. */
const INTEGER = /^-?\d{1,15}$/

/**
 * A preValidation hook reading the named query parameters as the numbers they spell: query values
 * arrive as text, and the API's validator coerces no types. Anything else is left as it is, for
 * the schema to refuse.
 */
export function queryNumbers(...names: string[]): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  return (request, _reply, done) => {
    const query = request.query as Record<string, unknown>
    for (const name of names) {
      const value = query[name]
      if (typeof value === 'string' && INTEGER.test(value)) query[name] = Number(value)
    }
    done()
  }
}

/** A preValidation hook reading the named query parameters spelled `true` or `false` as booleans; anything else is left for the schema to refuse. */
export function queryBooleans(...names: string[]): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  return (request, _reply, done) => {
    const query = request.query as Record<string, unknown>
    for (const name of names) {
      const value = query[name]
      if (value === 'true' || value === 'false') query[name] = value === 'true'
    }
    done()
  }
}
