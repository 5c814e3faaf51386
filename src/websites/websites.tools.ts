/**
 * The publishing and inspection operations as MCP tools: the same service calls and the same
 * schemas as websites.routes.ts. Path and query parameters become arguments next to the body's
 * fields; unknown arguments are refused, as unknown body fields are over REST. get_website and
 * list_versions answer a page of versions where REST lists them all, so that a site with a long
 * history stays a small result.
 */
import { Type } from 'typebox'
import { SITE_PASSWORD_MAX, SITE_PASSWORD_MIN, WEBSITE_LIST_LIMIT } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { type AnyMcpTool, defineTool, READ_ONLY, toolArgs } from '../mcp/tool-definition.ts'
import {
  JobIdParam,
  JobSchema,
  type PublishRequestSchemas,
  PublishVersionResultSchema,
  PublishWebsiteResultSchema,
  SlugSuggestionSchema,
  SitePasswordValue,
  SlugSuggestValue,
  FileSetRefArg,
  VersionDiffSchema,
  VersionRefArg,
  VersionPageQuery,
  VersionPageSchema,
  VersionSchema,
  WebsiteIdParam,
  WebsiteListSchema,
  WebsiteWithVersionPageSchema,
} from './websites.schemas.ts'
import type { WebsiteServices } from './websites.routes.ts'
import { siteUrlPattern } from '../core/site-address.ts'

const VERSION_PAGES = `paged: pass nextCursor as cursor for older ones (null on the last page).`

// Said once, in the tool that creates a site: publish_version points here. The limits on files
// and each file's fields (content, uploadId, sha256) are explained by the files schema.
const BUNDLE_RULES = `Bundle rules (publish_version's too), all checked at once: a bundle breaking any is refused whole, nothing stored, with PUBLISH_INVALID listing every violation:
- Paths are relative and /-separated (index.html, blog/index.html): no leading /, no . or .. segments, no backslash, ?, # or %.
- Self-contained: no external scripts or stylesheets (script src, link rel=stylesheet, CSS @import or JS import of a URL): put CSS and JS in the bundle. No iframe, frame, object or embed, no service workers. External images, links and fetch() are fine.
- /about serves about.html or about/index.html; 404.html, if any, serves missing pages.
warnings (the site check: broken links, missing alt text, heavy pages...) refuse nothing: fix them and publish again.`

/**
 * `sites`: how this instance's site URLs look, for the descriptions; `publish`: the publish
 * requests with this instance's bundle limits.
 */
export function websitesTools(services: WebsiteServices, sites: { siteScheme: string; siteDomain: string }, publish: PublishRequestSchemas): AnyMcpTool[] {
  const { websites, publishing, patches, promotion, versionFiles, deletion, jobDetails, slugs, sitePasswords } = services
  const live = siteUrlPattern(sites)
  return [
    defineTool({
      name: 'publish_website',
      toolset: 'publishing',
      title: 'Publish a new website',
      description: `Publish a NEW website from a complete bundle of files, live at once at pageUrl (${live}) as version 1. To change a site use publish_version (websiteId from list_websites): publishing again makes a second site.
Omit slug to derive it from name; pass slug only for an address the user asked for (suggest_slug checks it first).
${BUNDLE_RULES}`,
      input: ref(publish.PublishWebsiteRequestSchema),
      output: ref(PublishWebsiteResultSchema),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: async (principal, input) => (await publishing.create(principal, input)).result,
    }),

    defineTool({
      name: 'publish_version',
      toolset: 'publishing',
      title: 'Publish a new version of a website',
      description: `Publish a new version of an existing website; the bundle rules of publish_website apply to the whole new version. Either:
- a patch, best for small changes: baseVersion (the version you read) and changes applied in order to its files, the rest kept as is. An edit's oldText must occur exactly once (EDIT_NO_MATCH names the closest line). If a version newer than baseVersion exists: VERSION_CONFLICT naming it; start again from it, or overwrite true to undo its changes.
- files: the COMPLETE replacement bundle. Resend an unchanged file as { path, sha256 } (files[].sha256 from get_website).
With promote false, the version is served for review at its previewUrl: show it to the user and, once approved, call promote_version with versionId = the jobId returned here.`,
      // A preview's expiry is REST's alone (createWebsiteVersion, setPreviewExpiry): the default tool list stays within its budget.
      input: toolArgs({ websiteId: WebsiteIdParam, ...Type.Omit(publish.PublishVersionRequestSchema, ['expiresAt']).properties }),
      output: ref(PublishVersionResultSchema),
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      run: async (principal, { websiteId, ...request }) => (await patches.publish(principal, websiteId, request)).result,
    }),

    defineTool({
      name: 'promote_version',
      toolset: 'publishing',
      title: 'Make a version live (review or roll back)',
      description: `Make a stored version live from the next page view on: one published with promote false, once reviewed, or an older one to roll back to. versionId is its id (publish_version's jobId; see list_versions). Not rate limited.`,
      input: toolArgs({ websiteId: WebsiteIdParam, versionId: VersionRefArg }),
      output: ref(VersionSchema),
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (principal, { websiteId, versionId }) => promotion.promote(principal, websiteId, versionId),
    }),

    defineTool({
      name: 'diff_versions',
      toolset: 'publishing',
      title: 'Compare two versions',
      description: `What changed from one version to another, file by file (unchanged files left out): added, removed, changed or moved, with sizes and, for a changed text file, a unified diff (diffTruncated when too large).`,
      input: toolArgs({ websiteId: WebsiteIdParam, from: FileSetRefArg, to: FileSetRefArg }),
      output: ref(VersionDiffSchema),
      hints: READ_ONLY,
      run: (principal, { websiteId, from, to }) => versionFiles.compare(principal, websiteId, from, to),
    }),

    defineTool({
      name: 'list_websites',
      toolset: 'publishing',
      title: 'List your websites',
      description: `List the websites you own or edit, up to ${WEBSITE_LIST_LIMIT}, most recently updated first, with your role, pageUrl (absent until a version is live) and websiteLimits (count, max, canCreate). Start here to find a site's websiteId.`,
      input: toolArgs({}),
      // The REST response also repeats items as the deprecated alias `websites`; MCP has no old clients to keep.
      output: Type.Omit(WebsiteListSchema, ['websites']),
      hints: READ_ONLY,
      run: async (principal) => {
        const { websites: _alias, ...list } = await websites.list(principal)
        return list
      },
    }),

    defineTool({
      name: 'get_website',
      toolset: 'publishing',
      title: 'Get a website',
      description: `Get one website: its live pageUrl, which version is live (currentVersionId, currentVersion with its files) and its versions newest first, ${VERSION_PAGES}`,
      input: toolArgs({ websiteId: WebsiteIdParam, ...VersionPageQuery.properties }),
      output: WebsiteWithVersionPageSchema,
      hints: READ_ONLY,
      run: (principal, { websiteId, ...page }) => websites.getWithVersionPage(principal, websiteId, page),
    }),

    defineTool({
      name: 'list_versions',
      toolset: 'publishing',
      title: "List a website's versions",
      description: `List a website's versions, newest first: id (the versionId for promote_version), version number, instruction (the changelog message), files, isCurrent and previewUrl, ${VERSION_PAGES}`,
      input: toolArgs({ websiteId: WebsiteIdParam, ...VersionPageQuery.properties }),
      output: VersionPageSchema,
      hints: READ_ONLY,
      run: (principal, { websiteId, ...page }) => websites.listVersionsPage(principal, websiteId, page),
    }),

    defineTool({
      name: 'get_job_status',
      toolset: 'publishing',
      title: 'Get a publish job',
      description: `Get a publish job by jobId: status, progress message, pageUrl and previewUrl. Publishing is synchronous (nothing to poll): use it to recover a jobId's URLs.`,
      input: toolArgs({ jobId: JobIdParam }),
      output: ref(JobSchema),
      hints: READ_ONLY,
      run: (principal, { jobId }) => jobDetails.getJob(principal, jobId),
    }),

    defineTool({
      name: 'suggest_slug',
      toolset: 'publishing',
      title: 'Check a slug and get a free one',
      description: `Check a site address (slug: the subdomain of pageUrl) from a site name or draft slug: the normalized slug, whether it is valid and free, why not, and a free suggestion with its pageUrl. It reserves nothing.`,
      input: toolArgs({ value: SlugSuggestValue }),
      output: ref(SlugSuggestionSchema),
      hints: READ_ONLY,
      run: (_principal, { value }) => slugs.suggest(value),
    }),

    defineTool({
      name: 'delete_website',
      toolset: 'publishing',
      title: 'Delete a website',
      description: `Delete a website for good, with its versions, collections, entries and images; its URLs stop at once and its slug is freed. Owner only (OWNER_ONLY). Irreversible: ask the user first.`,
      input: toolArgs({ websiteId: WebsiteIdParam }),
      output: toolArgs({ deleted: Type.Literal(true, { description: 'The website is gone.' }), websiteId: Type.String() }),
      // Deleting it again answers NOT_FOUND and changes nothing more.
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: async (principal, { websiteId }) => {
        await deletion.delete(principal, websiteId)
        return { deleted: true as const, websiteId }
      },
    }),

    defineTool({
      name: 'set_site_password',
      toolset: 'publishing',
      title: 'Set or remove a site password',
      description: `Make visitors of every address of a site (live and previews) enter a password (${SITE_PASSWORD_MIN}-${SITE_PASSWORD_MAX} characters) before they see anything; null removes it.`,
      input: toolArgs({
        websiteId: WebsiteIdParam,
        password: Type.Union([SitePasswordValue, Type.Null()]),
      }),
      output: toolArgs({ passwordProtected: Type.Boolean() }),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (principal, { websiteId, password }) => {
        await sitePasswords.set(principal, websiteId, password)
        return { passwordProtected: password !== null }
      },
    }),
  ]
}
