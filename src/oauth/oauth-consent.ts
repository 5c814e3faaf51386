/** What an authorization asks a person on the consent page, and what they answer (oauth.service.ts decides). */
import type { InteractionResults } from 'oidc-provider'
import type { Capability } from '../core/enums.ts'

/** What the consent page shows and needs. */
export interface ConsentRequest {
  uid: string
  clientId: string
  clientName: string
  /** Where the browser goes after the answer; empty for a device sign-in, where it goes nowhere. */
  redirectHost: string
  /** A device sign-in (RFC 8628): the app waits on another machine. */
  device: boolean
  /** The capabilities the app asked for (all of them for `mcp` or no scope): ticked at first on the page. */
  capabilities: Capability[]
}

/** What the person let an app do on the consent page: checked by the caller (TokensService.checkScope). */
export interface ConsentChoice {
  /** null: every capability. */
  capabilities: Capability[] | null
  /** null: every site the person sees. */
  sites: string[] | null
}

/** An interaction as the library tells of it: its id and the parameters of the authorization request. */
export interface Interaction {
  uid: string
  params: Record<string, unknown>
  /** Set when the interaction signs in a device. */
  deviceCode?: string
}

/** The consent step's outcome: the answer for the library when the person allowed this app before, else the question to ask. */
export type ConsentStep = { answer: InteractionResults } | { page: ConsentRequest }
