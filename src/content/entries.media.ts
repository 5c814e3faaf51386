/**
 * What entries need from rich-text rendering and the image library, as one port, so the entries
 * service is written against these few calls and not against their implementations.
 */
import type { RichText } from './entries.validation.ts'
import type { RichTextPool } from './rich-text.pool.ts'

export interface EntryMedia {
  /** Sanitized HTML and the image sources it references (rendered off the event loop). */
  renderRichText(value: RichText): Promise<{ html: string; images: string[] }>
  /** The HTML sanitized again with image sources replaced by `sources` (others stay as they are). */
  rewriteImageSources(html: string, sources: Record<string, string>): Promise<string>
  /** Imports an image into the collection's library (once per URL); throws AppError on failure. */
  importImage(websiteId: string, collectionId: string, url: string): Promise<{ url: string }>
}

/** The port over the rich-text worker pool and an image library (anything with importFromUrl). */
export function libraryMedia(
  richText: RichTextPool,
  library: { importFromUrl(websiteId: string, collectionId: string, url: string): Promise<{ url: string }> },
): EntryMedia {
  return {
    renderRichText: (value) => richText.render(value),
    rewriteImageSources: (html, sources) => richText.rewriteImageSources(html, sources),
    importImage: (websiteId, collectionId, url) => library.importFromUrl(websiteId, collectionId, url),
  }
}
