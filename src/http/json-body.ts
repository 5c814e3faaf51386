import { isAscii, isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import secureJson from 'secure-json-parse'
import { AppError } from '../core/errors.ts'

const POISONING = { protoAction: 'error', constructorAction: 'error' } as const

/**
 * JSON bodies must be UTF-8 (RFC 8259). Decoding invalid bytes would silently turn them into
 * U+FFFD and store mangled text, so invalid UTF-8 is refused as INVALID_JSON instead.
 *
 * Prototype poisoning (`__proto__`, `constructor.prototype`) is refused as Fastify's own parser
 * refuses it, with the same library (secure-json-parse), but by scanning the parsed object rather
 * than running its pre-check regular expressions over the text: a publish body is megabytes of
 * file content in a few dozen objects, so walking the objects costs next to nothing where a scan of
 * the text costs as much as the parse itself.
 *
 * A body of ASCII bytes only (base64 content and most HTML, CSS and JS are) is decoded as Latin-1,
 * which for ASCII bytes gives the same string as UTF-8 decoding, by a plain copy: the cheapest of
 * Node's decoders, where 'ascii' masks every byte (docs/benchmarks.md).
 *
 * An empty body is no body, whatever its declared type.
 */
export function registerJsonBody(app: FastifyInstance): void {
  // Plinth speaks JSON only: any other body type is 415 UNSUPPORTED_MEDIA_TYPE, not a schema error.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const bytes = body as Buffer
    // No body at all, as many clients send with this type on every request: the route's schema
    // says whether it needs one (VALIDATION_FAILED), and where none is needed, nothing is missing.
    if (bytes.length === 0) return done(null, undefined)
    const ascii = isAscii(bytes)
    if (!ascii && !isUtf8(bytes)) return done(new AppError('INVALID_JSON', 'The request body is not valid UTF-8.'), undefined)
    let parsed: unknown
    try {
      parsed = JSON.parse(bytes.toString(ascii ? 'latin1' : 'utf8'))
    } catch (error) {
      return done(new AppError('INVALID_JSON', `The request body is not valid JSON: ${(error as Error).message}`), undefined)
    }
    try {
      if (parsed !== null && typeof parsed === 'object') secureJson.scan(parsed, POISONING)
    } catch {
      return done(
        new AppError('INVALID_JSON', 'The request body is not valid JSON: it sets "__proto__" or "constructor.prototype", which is refused.'),
        undefined,
      )
    }
    done(null, parsed)
  })
}
