import type { Capability, TokenAccess } from './enums.ts'

/** Who is calling: resolved from a token on every authenticated request, or from a web session. */
export interface Principal {
  userId: string
  email: string
  name: string | null
  tokenId: string
  access: TokenAccess
  /** What the token may do (core/capabilities.ts); null: everything, as a token that names none. */
  capabilities: readonly Capability[] | null
  /** The websites the token reaches; null: every one the person sees. Others are NOT_FOUND (db/access.ts). */
  sites: readonly string[] | null
}
