/**
 * What entries need from rich-text rendering and the image library, as one port, so the entries
 * service is written against these few calls and not against their implementations.
 */
import type { RichText } from './entries.validation.ts'
import { renderRichText, rewriteImageSources } from './rich-text.ts'

export interface EntryMedia {
  /** Sanitized HTML and the image sources it references. */
  renderRichText(value: RichText): { html: string; images: string[] }
  rewriteImageSources(html: string, replace: (src: string) => string): string
  /** Imports an image into the collection's library (once per URL); throws AppError on failure. */
  importImage(websiteId: string, collectionId: string, url: string): Promise<{ url: string }>
}

/** The port over the rich-text renderer and an image library (anything with importFromUrl). */
export function libraryMedia(library: { importFromUrl(websiteId: string, collectionId: string, url: string): Promise<{ url: string }> }): EntryMedia {
  return {
    renderRichText,
    rewriteImageSources,
    importImage: (websiteId, collectionId, url) => library.importFromUrl(websiteId, collectionId, url),
  }
}
