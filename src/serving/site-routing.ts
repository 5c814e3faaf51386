/**
 * Which answer a request to a version gets: a file of the version (after a forced `_redirects`
 * rule, if one matches), `/folder` sent on to `/folder/`, a content page (entries, listings,
 * feeds), the first matching `_redirects` rule (a redirect, or a rewrite to another path of the
 * same version), else the site's 404. FileResponder writes the files.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { HeaderList } from '../publishing/header-rules.ts'
import { matchRedirect, pathValue } from '../publishing/redirect-rules.ts'
import type { ContentAnswer, ContentResponder } from './content-responder.ts'
import type { FileResponder } from './file-responses.ts'
import { MISSING, parseTarget, type RequestTarget, resolveTarget } from './request-target.ts'
import { redirectHeaders } from './response-headers.ts'
import { BAD_REQUEST_PAGE, PAGE_NOT_FOUND_PAGE, sendPage } from './security-headers.ts'
import { siteHeadersFor, withSiteHeaders } from './site-header-rules.ts'
import type { PreparedFile, PreparedVersion } from './site-version.ts'

export class SiteRouter {
  constructor(
    private readonly content: ContentResponder,
    private readonly files: FileResponder,
  ) {}

  /** Answers a GET or HEAD to a version the visitor may see. */
  serve(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean): void {
    const target = parseTarget(req.url ?? '/')
    if (target === null) {
      sendPage(res, BAD_REQUEST_PAGE, head)
      return
    }
    // What `_headers` adds for this path (nothing for the many sites without one).
    const extra = siteHeadersFor(version, target.pathname)
    const file = resolveTarget(version, target)
    // A file, or a folder sent on to `/folder/`, comes before any rule but a forced (`!`) one.
    if (file !== MISSING && version.redirects?.forced && this.applyRule(req, res, version, head, target, extra, true)) return
    if (typeof file === 'object') {
      // The bundle's own sitemap.xml is merged with the site's content by the content responder.
      if (file.path === 'sitemap.xml') this.serveContent(req, res, version, head, target, file, extra)
      else this.files.send(req, res, version, file, head, extra)
    } else if (typeof file === 'string') {
      res.writeHead(301, redirectHeaders(version, file))
      res.end()
    } else {
      this.serveContent(req, res, version, head, target, null, extra)
    }
  }

  /**
   * A path that is no file of the version (or the bundle's sitemap.xml, `file`): the content
   * responder answers it, and entry pages and listings come before any `_redirects` rule; where it
   * has no page either, the rules apply, then the site's 404.
   */
  private serveContent(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    head: boolean,
    target: RequestTarget,
    file: PreparedFile | null,
    extra: HeaderList,
  ): void {
    const answer = this.content.answer(target.url, version)
    if (answer === undefined) {
      if (file === null) this.notServed(req, res, version, head, target, extra)
      else this.files.send(req, res, version, file, head, extra)
    } else if (answer instanceof Promise) {
      answer.then(
        (answered) => this.sendAnswer(req, res, version, head, target, answered, extra),
        (error) => this.files.fail(req, res, error),
      )
    } else {
      this.sendAnswer(req, res, version, head, target, answer, extra)
    }
  }

  private sendAnswer(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    head: boolean,
    target: RequestTarget,
    answer: ContentAnswer,
    extra: HeaderList,
  ): void {
    try {
      if (answer.kind === 'file') this.files.send(req, res, version, answer.file, head, extra)
      else if (answer.kind === 'page') sendPage(res, answer.page, head)
      else if (answer.kind === 'missing') this.notServed(req, res, version, head, target, extra)
      else {
        res.writeHead(301, redirectHeaders(version, answer.location + target.search))
        res.end()
      }
    } catch (error) {
      this.files.fail(req, res, error)
    }
  }

  /** Nothing at the path: the first `_redirects` rule that matches answers, else the site's 404. */
  private notServed(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, target: RequestTarget, extra: HeaderList): void {
    if (version.redirects !== null && this.applyRule(req, res, version, head, target, extra, false)) return
    this.sendMissing(req, res, version, head, extra)
  }

  /**
   * Answers the request with the version's first matching `_redirects` rule, if one matches: a
   * redirect with its status, or the rewritten path of the same version (a file, else a content
   * page) with 200 or 404. A rewrite goes through the rules no second time; the headers are those
   * of the path asked for.
   */
  private applyRule(
    req: IncomingMessage,
    res: ServerResponse,
    version: PreparedVersion,
    head: boolean,
    target: RequestTarget,
    extra: HeaderList,
    fileExists: boolean,
  ): boolean {
    const match = matchRedirect(version.redirects!, target.pathname, target.search, fileExists)
    if (match === null) return false
    if ('location' in match) {
      res.writeHead(match.status, redirectHeaders(version, match.location))
      res.end()
      return true
    }
    // The rewritten path is decoded: encoded again as a request target.
    const rewritten = parseTarget(pathValue(match.rewritePath) + match.search)
    const found = rewritten === null ? MISSING : resolveTarget(version, rewritten)
    // A rewrite to a folder serves its index.html, where a request for it is sent on to `/folder/`.
    const file = typeof found === 'string' ? version.files.get(`${rewritten!.pathname.slice(1)}/index.html`)! : found
    if (typeof file === 'object') {
      this.files.send(req, res, version, file, head, extra, match.status)
      return true
    }
    const answer = rewritten === null ? undefined : this.content.answer(rewritten.url, version)
    const send = (answered: ContentAnswer | undefined): void => {
      if (answered?.kind === 'file') this.files.send(req, res, version, answered.file, head, extra, match.status)
      else if (answered?.kind === 'page') sendPage(res, answered.page, head)
      else this.sendMissing(req, res, version, head, extra)
    }
    if (answer instanceof Promise) answer.then(send, (error) => this.files.fail(req, res, error))
    else send(answer)
    return true
  }

  private sendMissing(req: IncomingMessage, res: ServerResponse, version: PreparedVersion, head: boolean, extra: HeaderList): void {
    if (version.notFound === null) {
      if (extra.length === 0) sendPage(res, PAGE_NOT_FOUND_PAGE, head)
      else sendPage(res, { ...PAGE_NOT_FOUND_PAGE, headers: withSiteHeaders(PAGE_NOT_FOUND_PAGE.headers as string[], extra, version.preview) }, head)
    } else {
      this.files.send(req, res, version, version.notFound, head, extra, 404)
    }
  }
}
