/**
 * Values echoed in messages. A message names what it refuses, but never repeats a long value in
 * full (a 2 MB inline image, a 2,000-character URL): a short prefix and an ellipsis say which.
 */

/** At most `max` characters of `text`, the last one an ellipsis when it was cut. */
export function clipped(text: string, max = 100): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** A value quoted for a message, shortened (JSON quoting shows control characters). */
export function quoted(text: string, max = 120): string {
  // Cut before quoting: the value may be megabytes long.
  const q = JSON.stringify(text.slice(0, max))
  return q.length > max ? `${q.slice(0, max - 2)}…"` : q
}
