/**
 * Requests whose text holds the NUL character (U+0000) are answered here, before any handler
 * (core/nul-characters.ts): a path parameter holding one names nothing (404 NOT_FOUND), a query
 * parameter or a body field holding one is VALIDATION_FAILED naming it. A draft file's path being
 * written (PUT) is left to the authoring rules, which answer INVALID_PATH with the file.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../core/errors.ts'
import { nulFieldRefusal } from '../core/nul-characters.ts'
import { quoted } from '../core/text.ts'

/** The request's first text holding U+0000, as the error it gets; null when none does. */
function nulRefusal(request: FastifyRequest): AppError | null {
  for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string' || !value.includes('\u0000')) continue
    if (name === '*' && request.method === 'PUT') continue
    return new AppError('NOT_FOUND', `Nothing is named ${quoted(value, 60)}: no ${name === '*' ? 'path' : name} holds the NUL character (U+0000).`)
  }
  return nulFieldRefusal(request.query, 'query') ?? nulFieldRefusal(request.body)
}

/** Refuses, in this scope, every request nulRefusal finds fault with (after its schema is checked). */
export function refuseNulCharacters(scope: FastifyInstance): void {
  scope.addHook('preHandler', (request, _reply, done) => done(nulRefusal(request) ?? undefined))
}
