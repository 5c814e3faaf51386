/**
 * Request ids: every request gets one, every log line of the request carries it (`reqId`), and
 * every response returns it as `X-Request-Id`, so a person quoting a failed response leads the
 * operator straight to its log lines. A proxy or client that already gave the request an id is
 * kept to it, but only when that id is a short plain token: the value goes into logs and back
 * into a response header, so a long or odd one (spaces, quotes, control characters) is replaced.
 */
import { randomUUID } from 'node:crypto'

/** The header, lowercase as node:http presents incoming headers. */
export const REQUEST_ID_HEADER = 'x-request-id'

/** 1 to 128 letters, digits and `._:-`: what the ids of proxies and tracing tools are made of (UUIDs, ULIDs, hex span ids). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The id of a request: the one it came with when that is sane, else a new UUID. */
export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
}
