/**
 * The headers of every page Plinth's web site renders, and of the pages the OAuth authorization
 * server renders (its error page, its form_post answer): a strict CSP (scripts and styles from
 * the site only, no frames, forms to the site only), no sniffing, no framing, and the referrer
 * kept to the same origin.
 */

export const WEB_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/**
 * For pages whose form ends in a redirect to another site: sign-in and sign-up (which may go on
 * into an OAuth authorization, back to the app's address), the OAuth consent page and the OAuth
 * form_post answer. Browsers apply `form-action` to every redirect after a form is sent, so it is
 * left out there.
 */
export const REDIRECTING_FORM_CSP = WEB_CONTENT_SECURITY_POLICY.replace("form-action 'self'; ", '')

export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': WEB_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
})
