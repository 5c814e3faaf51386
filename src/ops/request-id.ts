/**
 * Request ids: every request gets one, every log line of the request carries it (`reqId`), and
 * every response returns it as `X-Request-Id`, so a person quoting a failed response leads the
 * operator straight to its log lines. A proxy or client that already gave the request an id is
 * kept to it, but only when that id is a short plain token: the value goes into logs and back
 * into a response header, so a long or odd one (spaces, quotes, control characters) is replaced.
 */
import { randomFillSync } from 'node:crypto'

/** The header, lowercase as node:http presents incoming headers. */
export const REQUEST_ID_HEADER = 'x-request-id'

/** 1 to 128 letters, digits and `._:-`: what the ids of proxies and tracing tools are made of (UUIDs, ULIDs, hex span ids). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The id of a request: the one it came with when that is sane, else a new UUID. */
export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : newRequestId()
}

/** UUIDs made at once, from one fill of random bytes into one string. */
const BATCH = 128
const UUID_BYTES = 16
const UUID_CHARS = 36
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1')

let batch = ''
let taken = BATCH

/**
 * A new random (version 4) UUID, from the same random source as crypto.randomUUID(). Each one is
 * a slice of a flat string made for a whole batch: randomUUID() joins every id from pieces, a
 * string node:http flattens again before it checks and writes the header, on every response.
 */
export function newRequestId(): string {
  if (taken === BATCH) fillBatch()
  const start = UUID_CHARS * taken++
  return batch.slice(start, start + UUID_CHARS)
}

function fillBatch(): void {
  const random = randomFillSync(Buffer.allocUnsafe(UUID_BYTES * BATCH))
  const text = Buffer.allocUnsafe(UUID_CHARS * BATCH)
  let at = 0
  for (let b = 0; b < random.length; b++) {
    const index = b % UUID_BYTES
    let byte = random[b]!
    // The version (4) and variant (10xx) bits of RFC 9562.
    if (index === 6) byte = (byte & 0x0f) | 0x40
    else if (index === 8) byte = (byte & 0x3f) | 0x80
    if (index === 4 || index === 6 || index === 8 || index === 10) text[at++] = 0x2d // -
    text[at++] = HEX_DIGITS[byte >> 4]!
    text[at++] = HEX_DIGITS[byte & 0x0f]!
  }
  batch = text.toString('latin1')
  taken = 0
}
