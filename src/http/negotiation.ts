import Negotiator from 'negotiator'

/**
 * The media type of `offered` that an Accept header prefers, quality values honoured (ties go
 * to the order of `offered`); undefined without an Accept header or when none is acceptable.
 */
export function preferredMediaType(accept: string | undefined, offered: readonly string[]): string | undefined {
  if (!accept) return undefined
  return new Negotiator({ headers: { accept } }).mediaType([...offered])
}
