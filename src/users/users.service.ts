import { hashPassword } from '../core/passwords.ts'
import { AppError, validationFailed } from '../core/errors.ts'
import { newId, nowIso } from '../core/ids.ts'
import { ACCOUNT_PASSWORD_MAX, ACCOUNT_PASSWORD_MIN, DISPLAY_NAME_MAX_CHARS } from '../core/limits.ts'
import { isUniqueViolation } from '../db/connect.ts'
import type { UserRow } from '../db/types.ts'
import { isEmailAddress, normalizeEmail } from './email-address.ts'
import type { UsersRepository } from './users.repository.ts'

/** The field message of a sign-up with an email that has an account. */
export const EMAIL_REGISTERED = 'is already registered'

const passwordProblem = (password: string): string | undefined =>
  password.length < ACCOUNT_PASSWORD_MIN
    ? `must be at least ${ACCOUNT_PASSWORD_MIN} characters`
    : password.length > ACCOUNT_PASSWORD_MAX
      ? `must be at most ${ACCOUNT_PASSWORD_MAX} characters`
      : undefined

export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  async create(input: { email: string; password: string; name?: string }): Promise<UserRow> {
    const email = normalizeEmail(input.email)
    const fields: Record<string, string> = {}
    if (!isEmailAddress(email)) fields.email = 'must be an email address'
    const password = passwordProblem(input.password)
    if (password) fields.password = password
    if (input.name !== undefined && (input.name.trim() === '' || input.name.length > DISPLAY_NAME_MAX_CHARS))
      fields.name = `must be 1 to ${DISPLAY_NAME_MAX_CHARS} characters`
    if (Object.keys(fields).length) throw validationFailed(fields)

    const user: UserRow = {
      id: newId('usr'),
      email,
      name: input.name?.trim() ?? null,
      password_hash: await hashPassword(input.password),
      created_at: nowIso(),
    }
    try {
      await this.users.insert(user)
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new AppError('VALIDATION_FAILED', `A user with the email ${email} already exists.`, {
          fields: { email: EMAIL_REGISTERED },
        })
      }
      throw error
    }
    return user
  }

  findById(id: string): Promise<UserRow | undefined> {
    return this.users.findById(id)
  }

  findByEmail(email: string): Promise<UserRow | undefined> {
    return this.users.findByEmail(normalizeEmail(email))
  }

  async setPassword(userId: string, password: string): Promise<void> {
    const problem = passwordProblem(password)
    if (problem) throw validationFailed({ newPassword: problem })
    await this.users.setPasswordHash(userId, await hashPassword(password))
  }

  /** The user with this email, or NOT_FOUND naming the email. */
  async requireByEmail(email: string): Promise<UserRow> {
    const user = await this.users.findByEmail(normalizeEmail(email))
    if (!user) throw new AppError('NOT_FOUND', `No user with the email ${normalizeEmail(email)}.`)
    return user
  }
}
