/** IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): a policy and the caller's state under it. */
import type { RateLimitState } from '../core/errors.ts'

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Policy': `"${state.policy}";q=${state.limit};w=${state.windowSeconds}`,
    RateLimit: `"${state.policy}";r=${state.remaining};t=${state.resetSeconds}`,
  }
}
