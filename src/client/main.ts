/**
 * The `plinth` commands that work with a Plinth server over its REST API, from any machine:
 * `login`, `logout`, `deploy`, `sites`, `versions`, `promote` and `open`. They load no server code and need no database; the server
 * is named by `--url` (or PLINTH_URL) and the caller by `--token` (or PLINTH_TOKEN), else by the
 * login `plinth login` stored (login-commands.ts).
 *
 * Exit codes: 0 done, 2 the site breaks authoring rules (every violation printed), 1 anything
 * else (one clear line on stderr). With `--json` the one result, or the error envelope, is the
 * only thing on stdout.
 */
import path from 'node:path'
import { createInterface } from 'node:readline/promises'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import type { PublishViolation } from '../core/errors.ts'
import { ApiClient, ApiError } from './api-client.ts'
import { credentials, DEFAULT_URL, login, LoginError, logout, serverUrl, staleLogin } from './login-commands.ts'
import { listSites, listVersions, openSite, promoteVersion } from './site-commands.ts'
import { deploy, DeployRefused, type DeployProgress, type DeployResult } from './deploy.ts'
import { readSiteFolder, SiteFolderError } from './site-folder.ts'
import { plainVendorFetch } from './vendor-folder.ts'

export const CLIENT_USAGE = `Usage:
  plinth login [--url URL] [--device]
      signs in through the browser (or with a code entered on another device) and stores the
      login in ~/.config/plinth/ (XDG_CONFIG_HOME), for the commands below
  plinth logout                              revokes the stored login and removes it
  plinth deploy [DIR] [--site SLUG_OR_ID] [--name N] [--category C] [--preview] [--message M]
                [--vendor] [--url URL] [--token T] [--json] [--yes]
      publishes the built site in DIR (default: the current folder) as a new version of a site,
      or as a new site when --site is not given. Only files the site does not hold yet are sent.
      --vendor first brings the external scripts, stylesheets, fonts and images the pages name
      into the bundle, under _vendor/{host}/, and points the pages at them.
  plinth sites [--json]                      the sites you own or edit
  plinth versions SITE [--json]              a site's versions, newest first (* marks the live one)
  plinth promote SITE VERSION [--json]       makes a version live: a review's promotion, or a rollback
  plinth open SITE                           opens the live site in the browser (BROWSER names one)

  PLINTH_URL and PLINTH_TOKEN stand for --url and --token (default URL: ${DEFAULT_URL}); without a
  token the stored login is used.`

/** Build folders whose parent names the site better (`my-site/dist` deploys "my-site"). */
const BUILD_FOLDERS = new Set(['dist', 'build', 'public', 'out', '_site', 'www', 'site'])

export interface ClientIo {
  out: (text: string) => void
  err: (text: string) => void
  /** Progress goes to stderr only when it is a terminal. */
  interactive: boolean
  env: NodeJS.ProcessEnv
  cwd: string
  /** Asks a yes/no question on the terminal; absent when there is none to ask. */
  confirm?: (question: string) => Promise<boolean>
}

class UsageError extends Error {}

export async function run(args: string[], io: ClientIo = processIo()): Promise<number> {
  const [command, ...rest] = args
  const json = rest.includes('--json')
  try {
    if (command === 'deploy') return await deployCommand(rest, io)
    if (command === 'login') return await loginCommand(rest, io)
    if (command === 'logout') {
      const { values, positionals } = parse(rest, {})
      if (values.help) return usage(io)
      if (positionals.length > 0 || values.url !== undefined || values.token !== undefined) throw new UsageError('logout takes no argument')
      return await logout(io)
    }
    const siteCommand = SITE_COMMANDS[command ?? '']
    if (siteCommand === undefined) throw new UsageError(`unknown command ${command ?? '(none)'}`)
    const { values, positionals } = parse(rest, {})
    if (values.help) return usage(io)
    if (positionals.length !== siteCommand.arguments) throw new UsageError(`${command} takes ${siteCommand.arguments} argument(s), got ${positionals.length}`)
    const { api, from } = await apiClient(values, io)
    const { lines, value } = await siteCommand.run(api, positionals, io.env).catch((error: unknown) => {
      throw staleLogin(error, from)
    })
    io.out(values.json ? JSON.stringify(value) : lines.join('\n'))
    return 0
  } catch (error) {
    return report(error, json, io)
  }
}

/** The commands on deployed sites: how many arguments each takes, and what it does. */
const SITE_COMMANDS: Record<
  string,
  { arguments: number; run: (api: ApiClient, args: string[], env: NodeJS.ProcessEnv) => Promise<{ lines: string[]; value: unknown }> }
> = {
  sites: { arguments: 0, run: (api) => listSites(api) },
  versions: { arguments: 1, run: (api, [site]) => listVersions(api, site!) },
  promote: { arguments: 2, run: (api, [site, version]) => promoteVersion(api, site!, version!) },
  open: { arguments: 1, run: (api, [site], env) => openSite(api, site!, env) },
}

const DEPLOY_OPTIONS = {
  site: { type: 'string' },
  name: { type: 'string' },
  category: { type: 'string' },
  preview: { type: 'boolean' },
  message: { type: 'string' },
  vendor: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
} as const

async function deployCommand(args: string[], io: ClientIo): Promise<number> {
  const { values, positionals } = parse(args, DEPLOY_OPTIONS)
  if (values.help) return usage(io)
  if (positionals.length > 1) throw new UsageError(`deploy takes one folder, got ${positionals.length}`)
  const dir = path.resolve(io.cwd, positionals[0] ?? '.')
  const { api, from } = await apiClient(values, io)
  const folder = await readSiteFolder(dir)
  const site = values.site ?? null
  const name = values.name ?? defaultSiteName(dir)
  if (site === null && !values.yes && !values.json && io.confirm && !(await io.confirm(`Create a new site "${name}" on ${api.baseUrl}?`))) {
    io.err('Nothing deployed.')
    return 1
  }
  const progress = values.json || !io.interactive ? () => {} : (event: DeployProgress) => io.err(progressLine(event, folder.skipped.length))
  const request = {
    folder,
    site,
    name,
    category: values.category ?? 'other',
    preview: values.preview ?? false,
    message: values.message,
    ...(values.vendor && { vendor: plainVendorFetch }),
  }
  const result = await deploy(api, request, progress).catch((error: unknown) => {
    throw staleLogin(error, from)
  })
  // What was fetched is said whether or not stderr is a terminal: it changed the bundle.
  if (!values.json) for (const file of result.vendored ?? []) io.err(`Brought in ${file.url} as ${file.path} (${size(file.bytes)})`)
  io.out(values.json ? JSON.stringify(result) : summary(result, values.preview ?? false))
  return 0
}

const COMMON_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

function parse<T extends ParseArgsConfig['options']>(args: string[], options: T) {
  try {
    return parseArgs({ args, allowPositionals: true, strict: true, options: { ...COMMON_OPTIONS, ...options } })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

const LOGIN_OPTIONS = { device: { type: 'boolean' } } as const

async function loginCommand(args: string[], io: ClientIo): Promise<number> {
  const { values, positionals } = parse(args, LOGIN_OPTIONS)
  if (values.help) return usage(io)
  if (positionals.length > 0 || values.token !== undefined) throw new UsageError('login takes only --url and --device')
  await login(serverUrl(values.url ?? (io.env.PLINTH_URL || DEFAULT_URL)), values.device ?? false, io)
  return 0
}

/** The REST client of a command, and the stored login its token comes from (null for --token or PLINTH_TOKEN). */
async function apiClient(values: { url?: string; token?: string }, io: ClientIo) {
  if (values.token === '') throw new UsageError('--token is empty')
  const found = await credentials(values, io.env)
  if ('missing' in found) throw new ApiError(0, 'AUTH_REQUIRED', found.missing)
  return { api: new ApiClient({ baseUrl: found.baseUrl, token: found.token, userAgent: 'plinth-client' }), from: found.login }
}

function usage(io: ClientIo): number {
  io.out(CLIENT_USAGE)
  return 0
}

function defaultSiteName(dir: string): string {
  const base = path.basename(dir)
  return BUILD_FOLDERS.has(base) ? path.basename(path.dirname(dir)) || base : base
}

function progressLine(event: DeployProgress, skipped: number): string {
  switch (event.step) {
    case 'vendoring':
      return 'Fetching the external files the pages name...'
    case 'checked':
      return `Checked ${event.files} files (${size(event.bytes)})${skipped > 0 ? `, ${skipped} skipped` : ''}: no rule broken`
    case 'planned':
      return event.toSend === 0
        ? `All ${event.reused} files are on the server already: sending none`
        : `Sending ${event.toSend} files (${size(event.bytesToSend)}), reusing ${event.reused}`
    case 'sent':
      return `Sent ${size(event.bytes)}`
    case 'publishing':
      return 'Publishing...'
  }
}

function summary(result: DeployResult, preview: boolean): string {
  const lines = [
    preview && !result.isCurrent
      ? `Stored version ${result.version} of ${result.slug} for review: ${result.previewUrl ?? result.pageUrl}\nThe live site stays as it was: ${result.pageUrl}`
      : `Published version ${result.version} of ${result.slug}: ${result.pageUrl}`,
    `${result.filesSent} file${result.filesSent === 1 ? '' : 's'} sent (${size(result.bytesSent)}), ${result.filesReused} reused`,
  ]
  for (const warning of result.warnings ?? []) lines.push(`warning ${violationLine(warning)}`)
  return lines.join('\n')
}

/** A violation or a warning on one line: code, file (and line), message. */
function violationLine(violation: PublishViolation & { line?: number }): string {
  const where = violation.path ? ` ${violation.path}${violation.line === undefined ? '' : `:${violation.line}`}` : ''
  return `${violation.code}${where}: ${violation.message}`
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

/** The exit code of a failure, after saying what it was. */
function report(error: unknown, json: boolean, io: ClientIo): number {
  if (error instanceof DeployRefused) {
    if (json) io.out(JSON.stringify({ error: { code: 'PUBLISH_INVALID', message: error.message, violations: error.violations } }))
    else {
      io.err(`${error.message}${error.where === 'local' ? ' (checked here; nothing was sent)' : ''}:`)
      for (const violation of error.violations) io.err(`  ${violationLine(violation)}`)
    }
    return 2
  }
  const envelope =
    error instanceof ApiError
      ? { code: error.code, message: error.message, ...(Object.keys(error.fields).length > 0 && { fields: error.fields }) }
      : error instanceof UsageError
        ? { code: 'USAGE', message: `${error.message}\n${CLIENT_USAGE}` }
        : error instanceof SiteFolderError
          ? { code: 'FOLDER', message: error.message }
          : error instanceof LoginError
            ? { code: 'LOGIN', message: `login failed: ${error.message}` }
            : null
  if (envelope === null) throw error
  if (json) io.out(JSON.stringify({ error: envelope }))
  else
    io.err(
      `plinth: ${envelope.message}${
        'fields' in envelope && envelope.fields
          ? ` (${Object.entries(envelope.fields)
              .map(([k, v]) => `${k}: ${v}`)
              .join('; ')})`
          : ''
      }`,
    )
  return 1
}

function processIo(): ClientIo {
  const terminal = Boolean(process.stdin.isTTY && process.stderr.isTTY)
  return {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    interactive: Boolean(process.stderr.isTTY),
    env: process.env,
    cwd: process.cwd(),
    confirm: terminal
      ? async (question) => {
          const prompt = createInterface({ input: process.stdin, output: process.stderr })
          try {
            return !/^n/i.test((await prompt.question(`${question} [Y/n] `)).trim())
          } finally {
            prompt.close()
          }
        }
      : undefined,
  }
}
