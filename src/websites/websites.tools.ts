/**
 * The publishing and inspection operations as MCP tools: the same service calls and the same
 * schemas as websites.routes.ts. Path and query parameters become arguments next to the body's
 * fields; unknown arguments are refused, as unknown body fields are over REST.
 */
import { type TProperties, Type } from 'typebox'
import { CATEGORIES } from '../core/enums.ts'
import { BUNDLE_LIMITS, formatSize, WEBSITE_LIST_LIMIT } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { type AnyMcpTool, defineTool, type ToolHints } from '../mcp/tool-definition.ts'
import {
  JobIdParam,
  JobSchema,
  PublishVersionRequestSchema,
  PublishVersionResultSchema,
  PublishWebsiteRequestSchema,
  PublishWebsiteResultSchema,
  SlugSuggestionSchema,
  SlugSuggestValue,
  VersionIdParam,
  VersionListSchema,
  VersionSchema,
  WebsiteIdParam,
  WebsiteListSchema,
  WebsiteSchema,
} from './websites.schemas.ts'
import type { WebsitesService } from './websites.service.ts'

const args = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false })

const READ: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }

const BUNDLE_RULES = `Bundle rules (checked all at once; a bundle that breaks any is refused and nothing is stored):
- 1 to ${BUNDLE_LIMITS.maxFiles} files, each at most ${formatSize(BUNDLE_LIMITS.maxFileBytes)} and ${formatSize(BUNDLE_LIMITS.maxBundleBytes)} in all once decoded, at most ${BUNDLE_LIMITS.maxHtmlPages} HTML pages; index.html at the root is required.
- Paths are relative and /-separated (index.html, about.html, blog/index.html, assets/site.css, images/logo.png): no leading /, no . or .. segments, no backslash, ?, # or %.
- Self-contained: no external scripts or stylesheets (script src, link rel=stylesheet, CSS @import or JS import of a URL); put your CSS and JS in the bundle. No iframe, frame, object or embed; no service workers; no base href to another site. External images, links and fetch() calls are fine.
- /about serves about.html or about/index.html; a 404.html, if present, is served for missing pages.
Each file gives exactly one of:
- content: text in UTF-8 (HTML, CSS, JS, SVG, JSON...); for a small binary (image, font), its base64 with contentEncoding "base64";
- uploadId: for a large binary, call create_upload, PUT the bytes to its uploadUrl, then pass its uploadId;
- sha256: the lowercase hex SHA-256 of a file you already published or uploaded, to resend an unchanged file without its bytes.
contentType is inferred from the extension; set it only to override.`

const ERRORS = `On error the result has isError and error.code: PUBLISH_INVALID lists every broken rule in error.violations (code, message, path), so fix them all before retrying; VALIDATION_FAILED names each bad argument in error.fields; RATE_LIMITED gives error.retryAfter in seconds.`

export function websitesTools(websites: WebsitesService): AnyMcpTool[] {
  return [
    defineTool({
      name: 'publish_website',
      title: 'Publish a new website',
      description: `Publish a NEW website from a complete bundle of files. It is live at once at pageUrl (https://{slug}.{site_domain}/) as version 1. To change a site that already exists, use publish_version instead (find its websiteId with list_websites); publishing again makes a second site.
category is one of ${CATEGORIES.join(', ')}. Omit slug to derive the address from name (made unique automatically); pass slug only for an address the user asked for: a taken or reserved one fails with SLUG_TAKEN naming a free one (check with suggest_slug first).
${BUNDLE_RULES}
${ERRORS}
Next: give the user pageUrl; keep websiteId (and slug) to refine the site with publish_version.`,
      input: ref(PublishWebsiteRequestSchema),
      output: ref(PublishWebsiteResultSchema),
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: async (principal, input) => (await websites.create(principal, input)).result,
    }),

    defineTool({
      name: 'publish_version',
      title: 'Publish a new version of a website',
      description: `Publish a new version of an existing website: the COMPLETE replacement bundle, every file the site needs, not a diff: resend an unchanged file cheaply as { path, sha256 }, its hash being the files[].sha256 that get_website and list_versions return. message is a short changelog entry.
promote true (the default) makes it live at once at pageUrl. promote false leaves the live site untouched: the version is only stored and served for review at its previewUrl (https://{slug}--v{n}.{site_domain}/). Show previewUrl to the user; once approved, call promote_version with this websiteId and versionId = the jobId returned here.
${BUNDLE_RULES}
${ERRORS}`,
      input: args({ websiteId: WebsiteIdParam, ...PublishVersionRequestSchema.properties }),
      output: ref(PublishVersionResultSchema),
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      run: async (principal, { websiteId, ...request }) => (await websites.publishVersion(principal, websiteId, request)).result,
    }),

    defineTool({
      name: 'promote_version',
      title: 'Make a version live (review or roll back)',
      description: `Make a stored version the live one of its website, from the next page view on: a version published with promote false once reviewed, or an older version to roll back to. versionId is the version's id (the jobId publish_version returned; list_versions lists them all). Promoting the live version again changes nothing. It is not a publish: it does not count toward the publish rate limit.
Next: the site's pageUrl now serves this version; get_website shows which version is live.`,
      input: args({ websiteId: WebsiteIdParam, versionId: VersionIdParam }),
      output: ref(VersionSchema),
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (principal, { websiteId, versionId }) => websites.promote(principal, websiteId, versionId),
    }),

    defineTool({
      name: 'list_websites',
      title: 'List your websites',
      description: `List the websites you own or edit, up to ${WEBSITE_LIST_LIMIT}, most recently updated first: id, name, slug, pageUrl (absent until a version is live), status, your role, and websiteLimits (count, max, canCreate). Start here to find the websiteId of a site the user mentions before changing it with publish_version.`,
      input: args({}),
      // The REST response also repeats items as the deprecated alias `websites`; MCP has no old clients to keep.
      output: Type.Omit(WebsiteListSchema, ['websites']),
      hints: READ,
      run: async (principal) => {
        const { websites: _alias, ...list } = await websites.list(principal)
        return list
      },
    }),

    defineTool({
      name: 'get_website',
      title: 'Get a website',
      description: `Get one website: name, slug, live pageUrl, category, which version is live (currentVersionId, currentVersion) and every version newest first with its files, isCurrent and previewUrl. Use it to see what is live before promoting or rolling back. For the versions alone, list_versions is lighter.`,
      input: args({ websiteId: WebsiteIdParam }),
      output: ref(WebsiteSchema),
      hints: READ,
      run: (principal, { websiteId }) => websites.get(principal, websiteId),
    }),

    defineTool({
      name: 'list_versions',
      title: "List a website's versions",
      description: `List a website's versions, newest first: id (the versionId for promote_version), number, kind, status, instruction (the changelog message), files (originalName, contentType, size, sha256), isCurrent and previewUrl. Use it to pick a version to review or to roll back to.`,
      input: args({ websiteId: WebsiteIdParam }),
      output: ref(VersionListSchema),
      hints: READ,
      run: (principal, { websiteId }) => websites.listVersions(principal, websiteId),
    }),

    defineTool({
      name: 'get_job_status',
      title: 'Get a publish job',
      description: `Get a publish job by jobId: status, progress message, pageUrl and previewUrl. Publishing is synchronous, so the job of a publish_website or publish_version that returned is already ready: there is nothing to poll. Use it to audit a job or to recover the URLs of the version a jobId produced.`,
      input: args({ jobId: JobIdParam }),
      output: ref(JobSchema),
      hints: READ,
      run: (principal, { jobId }) => websites.getJob(principal, jobId),
    }),

    defineTool({
      name: 'suggest_slug',
      title: 'Check a slug and get a free one',
      description: `Check a site address (slug, the subdomain in https://{slug}.{site_domain}/) and get an available one. Pass a site name or a draft slug: the result gives the normalized slug, whether it is valid and available, why not (message), and always an available suggestion with the pageUrl it would have. It reserves nothing: pass the suggestion as slug to publish_website soon.`,
      input: args({ value: SlugSuggestValue }),
      output: ref(SlugSuggestionSchema),
      hints: READ,
      run: (_principal, { value }) => websites.suggestSlug(value),
    }),
  ]
}
