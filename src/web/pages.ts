/**
 * How the web site answers: Liquid views from `views/` (HTML escaped by default), one layout, the
 * page headers (http/page-headers.ts), and content negotiation between HTML and markdown for the
 * public pages.
 */
import { fileURLToPath } from 'node:url'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Liquid } from 'liquidjs'
import type { Account } from '../auth/accounts.service.ts'
import { DISPLAY_NAME_MAX_CHARS, DOMAIN_MAX } from '../core/limits.ts'
import { preferredMediaType } from '../http/negotiation.ts'
import { PAGE_HEADERS } from '../http/page-headers.ts'

const VIEWS = fileURLToPath(new URL('./views/', import.meta.url))

const engine = new Liquid({
  root: VIEWS,
  extname: '.liquid',
  outputEscape: 'escape',
  cache: true,
  strictFilters: true,
  // Dates are shown in UTC, as the API gives them.
  timezoneOffset: 0,
  // Form fields' maxlength, from the limits the services enforce.
  globals: { inputLimits: { displayName: DISPLAY_NAME_MAX_CHARS, domain: DOMAIN_MAX } },
})

/** What every view may use: who is signed in, the CSRF token for its forms, where it is. */
export interface PageContext {
  account: Account | null
  csrf: string
  path: string
  signupOpen: boolean
  assets: { css: string; js: string; deploy: string }
}

export interface PageOptions {
  status?: number
  headers?: Record<string, string>
}

/** A view inside the layout, as HTML. */
export const renderPage = (context: PageContext, view: string, data: Record<string, unknown>): Promise<string> =>
  engine.renderFile(view, { ...data, page: context }) as Promise<string>

/** Renders a view inside the layout and sends it. */
export async function sendPage(
  reply: FastifyReply,
  context: PageContext,
  view: string,
  data: Record<string, unknown>,
  options: PageOptions = {},
): Promise<FastifyReply> {
  const html = await renderPage(context, view, data)
  reply
    .code(options.status ?? 200)
    .headers(PAGE_HEADERS)
    // Every page may name the person signed in and carries their CSRF token: never stored.
    .header('Cache-Control', 'no-store')
  if (options.headers) reply.headers(options.headers)
  return reply.type('text/html; charset=utf-8').send(html)
}

/** Sends markdown (the `.md` twin of a page, or its answer to `Accept: text/markdown`). */
export function sendMarkdown(reply: FastifyReply, markdown: string, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cache-Control', 'public, max-age=0, must-revalidate')
    .type('text/markdown; charset=utf-8')
    .send(markdown)
}

export type Representation = 'html' | 'markdown' | 'json'
const MEDIA_TYPES: Record<Representation, string> = { html: 'text/html', markdown: 'text/markdown', json: 'application/json' }

/**
 * What the client asked for, of `offered`, by its Accept header (quality values honoured). No
 * Accept, or `*\/*`, gets the first offered; browsers send text/html first and get the page.
 */
export function negotiate(request: FastifyRequest, offered: Representation[]): Representation {
  const chosen = preferredMediaType(
    request.headers.accept,
    offered.map((o) => MEDIA_TYPES[o]),
  )
  const answer = offered.find((o) => MEDIA_TYPES[o] === chosen) ?? offered[0]
  if (answer === undefined) throw new Error('negotiate() needs at least one representation to offer')
  return answer
}
