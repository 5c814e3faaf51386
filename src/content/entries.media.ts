/**
 * What entries need from rich-text rendering and the image library, as one port, so the entries
 * service is written against these few calls and not against their implementations.
 */
import type { Principal } from '../core/principal.ts'
import type { AssetLibrary } from '../images/asset-library.ts'
import type { AssetsService } from '../images/assets.service.ts'
import type { RichText } from './entries.validation.ts'
import type { RichTextPool } from './rich-text.pool.ts'

export interface EntryMedia {
  /** Sanitized HTML and the image sources it references (rendered off the event loop). */
  renderRichText(value: RichText): Promise<{ html: string; images: string[] }>
  /** The HTML sanitized again with image sources replaced by `sources` (others stay as they are). */
  rewriteImageSources(html: string, sources: Record<string, string>): Promise<string>
  /** Imports an image by URL (http(s), fetched once per URL, or data:, decoded) into the collection's library; throws AppError on failure. */
  importImage(websiteId: string, collectionId: string, url: string): Promise<{ url: string }>
  /** Copies a completed upload of the caller into the collection's library; throws AppError when it is not theirs, not complete or not an image. */
  importUpload(principal: Principal, websiteId: string, collectionId: string, uploadId: string): Promise<{ url: string }>
  /** Whether a library path (`/_assets/{hash}.{ext}`) names an image of this website. */
  hasLibraryImage(websiteId: string, path: string): Promise<boolean>
}

/** The port over the rich-text worker pool, an image library and the service that imports uploads into it. */
export function libraryMedia(
  richText: RichTextPool,
  library: Pick<AssetLibrary, 'importFromUrl' | 'findByPath'>,
  assets: Pick<AssetsService, 'importUpload'>,
): EntryMedia {
  return {
    renderRichText: (value) => richText.render(value),
    rewriteImageSources: (html, sources) => richText.rewriteImageSources(html, sources),
    importImage: (websiteId, collectionId, url) => library.importFromUrl(websiteId, collectionId, url),
    importUpload: (principal, websiteId, collectionId, uploadId) => assets.importUpload(principal, websiteId, collectionId, uploadId),
    hasLibraryImage: async (websiteId, path) => (await library.findByPath(websiteId, path)) !== null,
  }
}
