/**
 * The image library as an MCP tool: the same service call and the same schemas as
 * assets.routes.ts. The path parameter becomes an argument next to the body's fields.
 */
import { Type } from 'typebox'
import { formatSize } from '../core/limits.ts'
import { ref } from '../core/schemas.ts'
import { type AnyMcpTool, defineTool } from '../mcp/tool-definition.ts'
import { WebsiteIdParam } from '../websites/websites.schemas.ts'
import { ImportAssetRequestSchema, LibraryAssetSchema } from './assets.schemas.ts'
import type { AssetsService } from './assets.service.ts'

/** `maxImageBytes`: the largest image kept, a bundle file's size limit. */
export function imagesTools(assets: AssetsService, maxImageBytes: number): AnyMcpTool[] {
  return [
    defineTool({
      name: 'import_asset',
      toolset: 'images',
      title: "Add an image to a website's library",
      description: `Copy one image into the website's library from url (fetched once over public http(s), at most ${formatSize(maxImageBytes)}; a URL imported before returns the stored asset) or uploadId (from create_upload). PNG, JPEG, GIF, WebP and AVIF are kept (sniffed); anything else, SVG too, is refused. Use the result's url (/_assets/{hash}.{ext}) in pages and entry data.`,
      input: Type.Object({ websiteId: WebsiteIdParam, ...ImportAssetRequestSchema.properties }, { additionalProperties: false }),
      output: ref(LibraryAssetSchema),
      // Fetches from the web at large; importing the same URL again returns the stored asset.
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: (principal, { websiteId, ...input }) => assets.importAsset(principal, websiteId, input),
    }),
  ]
}
