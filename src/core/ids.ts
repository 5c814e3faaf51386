import { randomBytes } from 'node:crypto'

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** Uniformly random base62 text (rejection sampling, so no character is favoured). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

export type IdPrefix = 'usr' | 'tok' | 'web' | 'job' | 'upl' | 'col' | 'ent' | 'ast'

/** Opaque, random (not sequential) ids: web_..., job_..., usr_..., tok_... */
export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBase62(22)}`

export const nowIso = (): string => new Date().toISOString()
