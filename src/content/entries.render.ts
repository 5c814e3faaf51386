/**
 * Display-ready values of an entry: rich text as sanitized HTML whose images point at the
 * collection's image library, image fields as their library URL. A failed image fails the entry,
 * naming the field.
 */
import { AppError } from '../core/errors.ts'
import type { LoadedCollection } from './collections.service.ts'
import type { EntryMedia } from './entries.media.ts'
import { EntryFailure, type RichText, resolveImageUrl } from './entries.validation.ts'

export async function renderEntry(
  media: EntryMedia,
  collection: LoadedCollection,
  data: Record<string, unknown>,
  baseUrl: string | undefined,
): Promise<Record<string, unknown>> {
  const rendered: Record<string, unknown> = {}
  const imported = new Map<string, string>()
  const importImage = async (url: string, field: string): Promise<string> => {
    const known = imported.get(url)
    if (known) return known
    try {
      const { url: libraryUrl } = await media.importImage(collection.websiteId, collection.id, url)
      imported.set(url, libraryUrl)
      return libraryUrl
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      throw new EntryFailure('IMAGE_IMPORT_FAILED', `The image ${url} of ${field} could not be imported: ${error.message}`, {
        [field]: `image ${url} could not be imported (${error.code})`,
      })
    }
  }

  for (const field of collection.fields) {
    const value = data[field.name]
    if (value === undefined) continue
    const at = `data.${field.name}`
    if (field.type === 'image') rendered[field.name] = await importImage(value as string, at)
    else if (field.type === 'richText') {
      const { html, images } = await renderOrFail(media, value as RichText, at)
      const library = new Map<string, string>()
      for (const src of new Set(images)) {
        // Inline images (data:) go to the library as they are; the renderer kept only raster ones.
        const resolved = src.startsWith('data:') ? { url: src, relative: false } : resolveImageUrl(src, baseUrl)
        if ('problem' in resolved)
          throw new EntryFailure('VALIDATION_FAILED', `An image in ${at} is unusable: ${resolved.problem}.`, { [at]: `image ${resolved.problem}` })
        library.set(src, await importImage(resolved.url, at))
      }
      rendered[field.name] = library.size === 0 ? html : await rewriteOrFail(media, html, Object.fromEntries(library), at)
    } else rendered[field.name] = value
  }
  return rendered
}

async function renderOrFail(media: EntryMedia, value: RichText, field: string): Promise<{ html: string; images: string[] }> {
  try {
    return await media.renderRichText(value)
  } catch (error) {
    throw entryFailure(error, field)
  }
}

async function rewriteOrFail(media: EntryMedia, html: string, sources: Record<string, string>, field: string): Promise<string> {
  try {
    return await media.rewriteImageSources(html, sources)
  } catch (error) {
    throw entryFailure(error, field)
  }
}

/** A refusal of the renderer as this entry's failure, naming the field; anything else as it is. */
function entryFailure(error: unknown, field: string): unknown {
  if (!(error instanceof AppError)) return error
  const code = error.code === 'RICH_TEXT_TOO_COSTLY' ? 'RICH_TEXT_TOO_COSTLY' : 'VALIDATION_FAILED'
  return new EntryFailure(code, `${field}: ${error.message}`, { [field]: error.message })
}
