import { isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../core/errors.ts'

/**
 * JSON bodies must be UTF-8 (RFC 8259). Decoding invalid bytes would silently turn them into
 * U+FFFD and store mangled text, so invalid UTF-8 is refused as INVALID_JSON instead. Parsing
 * itself is Fastify's own (secure-json-parse: prototype poisoning is refused).
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  // Plinth speaks JSON only: any other body type is 415 UNSUPPORTED_MEDIA_TYPE, not a schema error.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer
    if (!isUtf8(bytes)) {
      done(new AppError('INVALID_JSON', 'The request body is not valid UTF-8.'), undefined)
      return
    }
    parseJson(request, bytes.toString('utf8'), done)
  })
}
