/**
 * `plinth` administration commands. Each prints its result on the last line of stdout and exits
 * non-zero with a clear message on stderr on error. Settings come from the same environment
 * variables as the server, so the commands act on the same database.
 */
import { parseArgs } from 'node:util'
import type { Composition, Services } from '../compose.ts'
import { ConfigError, loadConfig } from '../config.ts'
import { scopeOfRow, tokenState } from '../auth/tokens.service.ts'
import { describeSweep } from '../blobs/blob-sweep.ts'
import { AppError } from '../core/errors.ts'
import { createLogger } from '../log.ts'
import { normalizeEmail } from '../users/email-address.ts'

export const USAGE = `Usage:
  plinth deploy [DIR] [--site SLUG_OR_ID] ...                  publishes a built site folder to a Plinth server over
                                                              its API, from any machine; also plinth login, logout,
                                                              sites, versions, promote and open (plinth deploy --help)
  plinth user create --email E --password P [--name N]        prints the new user's id
  plinth token create --email E [--name N] [--access rest|mcp|both] [--expires-at ISO-DATE]
                    [--capabilities read,preview,promote,content,forms,manage] [--sites WEB_ID,...]
                                                              prints the token (shown once); without
                                                              --capabilities or --sites it has no such limit
  plinth token list --email E                                 lists the user's tokens
  plinth token revoke TOKEN_ID                                revokes a token
  plinth site share WEBSITE_ID --email E --role editor        makes E an editor of the site (invites E
                                                              when E has no account yet)
  plinth blobs sweep                                          removes temp files and unreferenced blobs
                                                              older than the grace period; prints what it freed

Settings (PLINTH_DATA_DIR, DATABASE_URL, ...) are read from the environment, as by npm start.`

class UsageError extends Error {}

type Handler = (services: Services, args: string[], out: (line: string) => void, plinth: Composition) => Promise<void>

/** The `--name value` options of `spec` and exactly `count` arguments (a command takes none or one). */
function options<T extends Record<string, { type: 'string' }>, N extends 0 | 1 = 0>(args: string[], spec: T, count?: N) {
  const expected = count ?? 0
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args, options: spec, allowPositionals: expected > 0, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (parsed.positionals.length !== expected) throw new UsageError(`expected ${expected} argument(s), got ${parsed.positionals.length}`)
  return { values: parsed.values as { [K in keyof T]?: string }, positionals: parsed.positionals as N extends 1 ? [string] : [] }
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`)
  return value
}

/**
 * A list flag as given: absent is no limit, but one given with nothing in it (`--sites=`, an empty
 * shell variable) is refused, never read as no limit.
 */
function listFlag(value: string | undefined, flag: string): string | undefined {
  if (value !== undefined && !value.split(',').some((one) => one.trim() !== '')) {
    throw new UsageError(`--${flag} names nothing: leave it out for a token without that limit`)
  }
  return value
}

const COMMANDS: Record<string, Handler> = {
  async 'user create'(services, args, out) {
    const { values } = options(args, { email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' } })
    const user = await services.users.create({ email: required(values.email, 'email'), password: required(values.password, 'password'), name: values.name })
    // Sites the email was invited to edit are the new account's at once, as on sign-up.
    await services.members.acceptInvitations(user)
    out(user.id)
  },

  async 'token create'(services, args, out) {
    const { values } = options(args, {
      email: { type: 'string' },
      name: { type: 'string' },
      access: { type: 'string' },
      'expires-at': { type: 'string' },
      capabilities: { type: 'string' },
      sites: { type: 'string' },
    })
    const user = await services.users.requireByEmail(required(values.email, 'email'))
    const { token } = await services.tokens.create(user.id, {
      name: values.name,
      access: values.access,
      expiresAt: values['expires-at'],
      capabilities: listFlag(values.capabilities, 'capabilities'),
      sites: listFlag(values.sites, 'sites'),
    })
    out(token)
  },

  async 'token list'(services, args, out) {
    const { values } = options(args, { email: { type: 'string' } })
    const user = await services.users.requireByEmail(required(values.email, 'email'))
    const tokens = await services.tokens.list(user.id)
    for (const t of tokens) {
      out(
        [
          t.id,
          `${t.token_hint}...`,
          t.access,
          tokenState(t),
          `created ${t.created_at}`,
          `last used ${t.last_used_at ?? 'never'}`,
          `expires ${t.expires_at ?? 'never'}`,
          `capabilities ${scopeOfRow(t).capabilities?.join(',') ?? 'all'}`,
          `sites ${scopeOfRow(t).sites?.join(',') ?? 'all'}`,
          JSON.stringify(t.name),
        ].join('\t'),
      )
    }
    out(`${tokens.length} token${tokens.length === 1 ? '' : 's'}`)
  },

  async 'token revoke'(services, args, out) {
    const { positionals } = options(args, {}, 1)
    await services.tokens.revoke(null, positionals[0])
    out(`revoked ${positionals[0]}`)
  },

  async 'site share'(services, args, out) {
    const { values, positionals } = options(args, { email: { type: 'string' }, role: { type: 'string' } }, 1)
    const email = normalizeEmail(required(values.email, 'email'))
    const role = required(values.role, 'role')
    const outcome = await services.members.share(positionals[0], email, role)
    out(
      outcome === 'editor'
        ? `${email} is now ${role} of ${positionals[0]}`
        : `${email} has no account yet: invited as ${role} of ${positionals[0]} (takes effect when they sign up with this email)`,
    )
  },

  async 'blobs sweep'(_services, args, out, plinth) {
    options(args, {})
    out(`blobs sweep: ${describeSweep(await plinth.sweepBlobs())}`)
  },
}

/** Runs one command; returns the exit code. Output goes to the given writers (tests capture them). */
export async function run(
  argv: string[],
  io: { out: (line: string) => void; err: (line: string) => void } = { out: (l) => console.log(l), err: (l) => console.error(l) },
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const name = argv.slice(0, 2).join(' ')
  const handler = COMMANDS[name]
  if (!handler) {
    io.err(argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' ? USAGE : `plinth: unknown command "${argv.join(' ')}"\n\n${USAGE}`)
    return argv[0] === 'help' || argv[0] === '--help' ? 0 : 2
  }
  let plinth: Composition | undefined
  try {
    const config = loadConfig(env)
    // Loaded once a command is known: usage and its errors answer without the whole service.
    const { compose } = await import('../compose.ts')
    // Stdout carries each command's result: log lines (warnings only) go to stderr.
    plinth = await compose(config, createLogger(config.logLevel === 'silent' ? 'silent' : 'warn', process.stderr), { sweepAtStart: false })
    await handler(plinth.services, argv.slice(2), io.out, plinth)
    return 0
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`plinth ${name}: ${error.message}\n\n${USAGE}`)
      return 2
    }
    if (error instanceof AppError) {
      const fields = error.fields
        ? Object.entries(error.fields)
            .map(([k, v]) => `\n  ${k}: ${v}`)
            .join('')
        : ''
      io.err(`plinth ${name}: ${error.message}${fields}`)
      return 1
    }
    io.err(`plinth ${name}: ${error instanceof ConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    return 1
  } finally {
    await plinth?.close()
  }
}
