/**
 * How the violations of a check are bounded: a bundle that breaks a rule thousands of times is
 * told the first violation of every code it breaks, then the earliest others up to the limit, in
 * their order.
 */
import type { PublishViolation } from '../core/errors.ts'

/**
 * Collects per-file violations. Once `limit` are held, later ones can only survive the final cap if
 * they are the first of their code, so the rest are dropped early (bounds memory on hostile input).
 */
export class ViolationCollector<V extends { code: string } = PublishViolation> {
  readonly list: V[] = []
  private readonly codes = new Set<string>()
  constructor(private readonly limit: number) {}

  add(v: V): void {
    if (this.list.length >= this.limit && this.codes.has(v.code)) return
    this.codes.add(v.code)
    this.list.push(v)
  }
}

/** At most `max` violations, keeping the first of every code, then the earliest others; order kept. */
export function capViolations<V extends { code: string }>(all: V[], max: number): V[] {
  if (all.length <= max) return all
  const keep = new Set<number>()
  const codes = new Set<string>()
  all.forEach((v, i) => {
    if (!codes.has(v.code)) {
      codes.add(v.code)
      keep.add(i)
    }
  })
  for (let i = 0; i < all.length && keep.size < max; i++) keep.add(i)
  return all.filter((_, i) => keep.has(i))
}
