/** Email addresses as accounts and invitations compare them: nothing here loads the database, so the CLI can use it before it opens one. */

import { EMAIL_MAX_CHARS } from '../core/limits.ts'

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** How accounts (and invitations) store an email: trimmed and lowercased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

/** Whether a normalized email is one an account could have. */
export const isEmailAddress = (email: string): boolean => EMAIL.test(email) && email.length <= EMAIL_MAX_CHARS
