/**
 * The public pages of the web site: the landing page, the documentation, llms.txt and
 * llms-full.txt, sitemap.xml, robots.txt, the stylesheet and script, and the 404 page. Every page
 * answers `Accept: text/markdown` with its markdown, is also at an explicit `.md` URL, and
 * carries `Vary: Accept`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { escapeHtml } from '../core/html.ts'
import type { StaticAsset } from './assets.ts'
import type { DocPage, Docs } from './docs.ts'
import { negotiate, sendMarkdown, sendPage } from './pages.ts'
import { pageContext, type WebContext } from './web-context.ts'

export function publicRoutes(web: WebContext, docs: Docs, home: { markdown: string; html: string }, assets: Record<string, StaticAsset>) {
  const { config } = web
  const title = (page: DocPage) => (page.name ? `${page.title} · Plinth docs` : page.title)

  /** One page in its two representations, chosen by the `.md` suffix or by Accept. */
  const answer = async (request: FastifyRequest, reply: FastifyReply, md: boolean, markdown: string, html: () => Promise<FastifyReply>) => {
    reply.header('Vary', 'Accept')
    if (md || negotiate(request, ['html', 'markdown']) === 'markdown') return sendMarkdown(reply, markdown)
    return html()
  }
  const homePage = (request: FastifyRequest, reply: FastifyReply, md: boolean) =>
    answer(request, reply, md, home.markdown, () =>
      sendPage(reply, pageContext(web, request, reply), 'home', { title: 'Plinth', description: 'Publish a static website in one call.', home }),
    )

  const docPage = (request: FastifyRequest, reply: FastifyReply, page: DocPage, md: boolean) =>
    answer(request, reply, md, page.markdown, () =>
      sendPage(reply, pageContext(web, request, reply), 'doc', { title: title(page), description: page.summary, doc: page, pages: docs.pages }),
    )

  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify awaits an async plugin, so a throw while registering rejects register()
  return async (app: FastifyInstance) => {
    app.get('/', { schema: { hide: true } }, (request, reply) => homePage(request, reply, false))
    app.get('/index.md', { schema: { hide: true } }, (request, reply) => homePage(request, reply, true))
    app.get('/docs', { schema: { hide: true } }, (request, reply) => docPage(request, reply, docs.index, false))
    app.get('/docs.md', { schema: { hide: true } }, (request, reply) => docPage(request, reply, docs.index, true))
    app.get<{ Params: { page: string } }>('/docs/:page', { schema: { hide: true } }, (request, reply) => {
      const md = request.params.page.endsWith('.md')
      const page = docs.find(md ? request.params.page.slice(0, -3) : request.params.page)
      if (!page) return notFoundPage(web, request, reply)
      return docPage(request, reply, page, md)
    })

    // Made on first request and kept: they depend on the docs and the settings only.
    const texts: Array<[path: string, type: string, make: () => string]> = [
      ['/llms.txt', 'text/plain; charset=utf-8', llmsTxt],
      ['/llms-full.txt', 'text/plain; charset=utf-8', llmsFullTxt],
      ['/sitemap.xml', 'application/xml; charset=utf-8', sitemap],
      ['/robots.txt', 'text/plain; charset=utf-8', robots],
    ]
    for (const [path, type, make] of texts) {
      let text: string | undefined
      app.get(path, { schema: { hide: true } }, (_request, reply) => sendText(reply, type, (text ??= make())))
    }
    app.get<{ Params: { file: string } }>('/assets/:file', { schema: { hide: true } }, (request, reply) => {
      const asset = assets[request.params.file]
      if (!asset) return notFoundPage(web, request, reply)
      // Pages link assets with their content tag (?v=...), so a new release is fetched anew.
      return reply.header('Cache-Control', 'public, max-age=31536000, immutable').header('X-Content-Type-Options', 'nosniff').type(asset.type).send(asset.body)
    })
    // Where browsers and feed readers look for an icon without reading a page first.
    const icon = assets['favicon.svg']!
    app.get('/favicon.ico', { schema: { hide: true } }, (_request, reply) =>
      reply.header('Cache-Control', 'public, max-age=86400').header('X-Content-Type-Options', 'nosniff').type(icon.type).send(icon.body),
    )
  }

  function sendText(reply: FastifyReply, type: string, text: string) {
    return reply.header('Cache-Control', 'public, max-age=300').header('X-Content-Type-Options', 'nosniff').type(type).send(text)
  }

  function llmsTxt(): string {
    const line = (page: DocPage) => `- [${page.title}](${config.siteUrl}${page.path}.md): ${page.summary}`
    return [
      '# Plinth',
      '',
      `> Plinth publishes static websites (HTML, CSS, JS, images) sent as one JSON bundle, stores each as an immutable numbered version, and serves it at once at ${config.siteScheme}://{slug}.${config.siteDomain}/. Everything is offered over a REST API and an MCP server with the same personal access tokens.`,
      '',
      `Tokens are minted by a person at ${config.siteUrl}/mcp. Send them as \`Authorization: Bearer plinth_...\`.`,
      '',
      '## Docs',
      '',
      ...docs.pages.map(line),
      '',
      '## API',
      '',
      `- [OpenAPI document](${config.baseUrl}/openapi.json): every REST operation, field and error code (OpenAPI 3.1)`,
      `- [API index](${config.baseUrl}/v1): where the OpenAPI document, the MCP endpoint and token minting are`,
      `- [MCP endpoint](${config.baseUrl}/mcp): Streamable HTTP; the tools publish, refine and inspect sites and their content`,
      '',
      '## Optional',
      '',
      `- [Full documentation](${config.siteUrl}/llms-full.txt): every page of the docs in one file`,
      '',
    ].join('\n')
  }

  function llmsFullTxt(): string {
    return [docs.index, ...docs.pages].map((page) => `<!-- ${config.siteUrl}${page.path}.md -->\n\n${page.markdown.trim()}\n`).join('\n\n')
  }

  function sitemap(): string {
    const urls = ['/', '/docs', ...docs.pages.map((p) => p.path)].map((path) => `  <url><loc>${escapeHtml(config.siteUrl + path)}</loc></url>`)
    return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}\n</urlset>\n`
  }

  function robots(): string {
    return [
      'User-agent: *',
      'Allow: /',
      'Disallow: /dashboard',
      'Disallow: /account',
      'Disallow: /jobs/',
      'Disallow: /mcp/',
      '',
      `Sitemap: ${config.siteUrl}/sitemap.xml`,
      '',
    ].join('\n')
  }
}

export const notFoundMarkdown = (siteUrl: string, path: string): string =>
  `# Not found\n\nNothing is at \`${path.replace(/`/g, '')}\`.\n\n- [Home](${siteUrl}/)\n- [Documentation](${siteUrl}/docs)\n- [llms.txt](${siteUrl}/llms.txt)\n`

/** The web site's 404, as a page or markdown: `as` when the caller has chosen, else by Accept (markdown first). */
export async function notFoundPage(
  web: WebContext,
  request: FastifyRequest,
  reply: FastifyReply,
  as: 'markdown' | 'html' = negotiate(request, ['markdown', 'html']) === 'html' ? 'html' : 'markdown',
): Promise<FastifyReply> {
  const path = request.url.split('?', 1).join('').slice(0, 200)
  reply.header('Vary', 'Accept')
  if (as === 'html') {
    return sendPage(reply, pageContext(web, request, reply), 'not-found', { title: 'Not found', path }, { status: 404 })
  }
  return sendMarkdown(reply, notFoundMarkdown(web.config.siteUrl, path), 404)
}
