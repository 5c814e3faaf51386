/**
 * The Content-Security-Policy of published sites, declared once as directives: the serving layer
 * sends it rendered (SITE_CONTENT_SECURITY_POLICY), and the authoring rules read it to tell, at
 * publish, what browsers will refuse to run under it (publishing/js-rules.ts), so the two never
 * disagree.
 *
 * It enforces the authoring rules in the browser and allows exactly what they accept: scripts and
 * styles only from the site (inline ones too); no frames or plugins; same-site dedicated and
 * shared workers (also from blob: URLs) and WebAssembly, but no eval; images, media, fonts,
 * fetch/XHR/WebSocket connections may go to other origins over http(s), as the rules let pages
 * reference them; forms are sent to the site only (`form-action 'self'`), where `/_forms/{name}`
 * takes them. Service workers are governed by worker-src too: the site
 * server refuses their script requests (`Service-Worker: script`) instead.
 */

export const SITE_POLICY: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'default-src': ["'self'"],
  'script-src': ["'self'", "'unsafe-inline'", "'wasm-unsafe-eval'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:', 'blob:', 'https:', 'http:'],
  'media-src': ["'self'", 'data:', 'blob:', 'https:', 'http:'],
  'font-src': ["'self'", 'data:', 'https:', 'http:'],
  'connect-src': ["'self'", 'https:', 'http:', 'wss:', 'ws:'],
  'frame-src': ["'none'"],
  'child-src': ["'none'"],
  'worker-src': ["'self'", 'blob:'],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
})

/** The policy as the Content-Security-Policy header value. */
export const SITE_CONTENT_SECURITY_POLICY = Object.entries(SITE_POLICY)
  .map(([directive, sources]) => `${directive} ${sources.join(' ')}`)
  .join('; ')

/** The sources of the directive that governs scripts. */
export const SCRIPT_SOURCES = SITE_POLICY['script-src']!.join(' ')

/**
 * Whether scripts may compile strings into code (eval, the Function constructors, a string given
 * to setTimeout/setInterval): only with `'unsafe-eval'` among the script sources.
 */
export const SITE_POLICY_ALLOWS_EVAL = SITE_POLICY['script-src']!.includes("'unsafe-eval'")

/** Directives that take their sources from default-src when the policy does not name them (CSP Level 3). */
const FETCH_DIRECTIVES = new Set([
  'child-src',
  'connect-src',
  'font-src',
  'frame-src',
  'img-src',
  'manifest-src',
  'media-src',
  'object-src',
  'script-src',
  'style-src',
  'worker-src',
])

/** The directive as the policy states it, after the fallback a browser applies: `manifest-src` reads `default-src 'self'`. */
export function policyDirective(directive: string): string {
  const own = SITE_POLICY[directive]
  if (own !== undefined) return `${directive} ${own.join(' ')}`
  const fallback = FETCH_DIRECTIVES.has(directive) ? SITE_POLICY['default-src'] : undefined
  return fallback === undefined ? `${directive} (not restricted)` : `default-src ${fallback.join(' ')}`
}

/** Whether the policy lets `directive` take an https URL of another origin ('*' or the https: scheme among its sources). */
export function policyAllowsOtherOrigins(directive: string): boolean {
  const sources = SITE_POLICY[directive] ?? (FETCH_DIRECTIVES.has(directive) ? SITE_POLICY['default-src'] : undefined)
  return sources === undefined || sources.includes('*') || sources.includes('https:')
}

/** Whether a `<base href>` may point at another origin: browsers ignore it unless base-uri allows that origin. */
export const SITE_POLICY_ALLOWS_FOREIGN_BASE = policyAllowsOtherOrigins('base-uri')

/** Whether a page may link a web app manifest of another origin (manifest-src, else default-src). */
export const SITE_POLICY_ALLOWS_FOREIGN_MANIFEST = policyAllowsOtherOrigins('manifest-src')

/** Whether a form may be sent to another origin (form-action, which has no fallback directive). */
export const SITE_POLICY_ALLOWS_FOREIGN_FORM_ACTION = policyAllowsOtherOrigins('form-action')
