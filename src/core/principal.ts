import type { TokenAccess } from './enums.ts'

/** Who is calling: resolved from a token on every authenticated request, or from a web session. */
export interface Principal {
  userId: string
  email: string
  name: string | null
  tokenId: string
  access: TokenAccess
}
