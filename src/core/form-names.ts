/**
 * Forms of published sites: where a page posts one, what names it may have, and which of its
 * fields are controls rather than answers. Publishing finds them, serving takes their posts.
 */

/** The path a form posts to, on the site's own host: `/_forms/{name}`. */
export const FORM_PATH_PREFIX = '/_forms/'

/** A form's name: a slug of 1 to 50 characters. */
export const FORM_NAME_PATTERN = /^[a-z][a-z0-9-]{0,49}$/

/** Fields whose names start with this are controls (`_next`, `_gotcha`), never stored. */
export const CONTROL_FIELD_PREFIX = '_'
/** Where to send the visitor after a post: a path of the same site. */
export const NEXT_FIELD = '_next'
/** The honeypot: a field people never see; a post that fills it looks accepted and stores nothing. */
export const HONEYPOT_FIELD = '_gotcha'

export const isFormName = (name: string): boolean => FORM_NAME_PATTERN.test(name)

/**
 * The form a path posts to (`/_forms/booking` -> `booking`), null when it is no form's path. A
 * query is ignored; anything after the name is not a form's path.
 */
export function formNameOfPath(path: string): string | null {
  if (!path.startsWith(FORM_PATH_PREFIX)) return null
  const rest = path.slice(FORM_PATH_PREFIX.length)
  const query = rest.indexOf('?')
  const name = query === -1 ? rest : rest.slice(0, query)
  return isFormName(name) ? name : null
}
