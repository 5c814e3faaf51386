/**
 * Display-ready values of an entry: rich text as sanitized HTML whose images point at the site's
 * image library, image fields as their library URL. A failed image fails the entry, naming the
 * field: IMAGE_IMPORT_FAILED when a URL could not be fetched, VALIDATION_FAILED when an image
 * named without a fetch (library path, upload, inline data) is unknown or not an image.
 */
import type { Principal } from '../core/principal.ts'
import { AppError } from '../core/errors.ts'
import type { LoadedCollection } from './collections.service.ts'
import type { EntryMedia } from './entries.media.ts'
import { EntryFailure, type RichText } from './entries.validation.ts'
import { echo, type ImageReference, imageReference } from './image-references.ts'

export interface RenderedEntry {
  rendered: Record<string, unknown>
  /**
   * The data to store: image fields given inline or by upload hold the library path of their
   * copy, so the stored entry never repeats megabytes of inline data nor depends on an upload
   * that expires. Everything else as given.
   */
  data: Record<string, unknown>
}

export async function renderEntry(
  media: EntryMedia,
  principal: Principal,
  collection: LoadedCollection,
  data: Record<string, unknown>,
  baseUrl: string | undefined,
): Promise<RenderedEntry> {
  const rendered: Record<string, unknown> = {}
  const stored = { ...data }
  const known = new Map<string, string>()
  const toLibrary = async (reference: ImageReference, field: string): Promise<string> => {
    const key = 'url' in reference ? reference.url : 'path' in reference ? reference.path : reference.uploadId
    const done = known.get(key)
    if (done) return done
    const url = await libraryUrl(media, principal, collection, reference, field)
    known.set(key, url)
    return url
  }

  for (const field of collection.fields) {
    const value = data[field.name]
    if (value === undefined) continue
    const at = `data.${field.name}`
    if (field.type === 'image') {
      // Checked by checkEntry: a reference, with URLs already absolute.
      const reference = imageReference(value as string, baseUrl)
      if ('problem' in reference) throw new EntryFailure('VALIDATION_FAILED', `${at} ${reference.problem}.`, { [at]: reference.problem })
      rendered[field.name] = await toLibrary(reference, at)
      if (reference.kind === 'upload' || reference.kind === 'inline') stored[field.name] = rendered[field.name]
    } else if (field.type === 'richText') {
      const { html, images } = await renderOrFail(media, value as RichText, at)
      const library = new Map<string, string>()
      for (const src of new Set(images)) {
        const reference = imageReference(src, baseUrl)
        if ('problem' in reference)
          throw new EntryFailure('VALIDATION_FAILED', `An image in ${at} is unusable: ${reference.problem}.`, { [at]: `image ${reference.problem}` })
        library.set(src, await toLibrary(reference, at))
      }
      rendered[field.name] = library.size === 0 ? html : await rewriteOrFail(media, html, Object.fromEntries(library), at)
    } else rendered[field.name] = value
  }
  return { rendered, data: stored }
}

/** The library URL of an image, imported when it is not in the library yet. */
async function libraryUrl(media: EntryMedia, principal: Principal, collection: LoadedCollection, reference: ImageReference, field: string): Promise<string> {
  const { websiteId, id: collectionId } = collection
  if (reference.kind === 'library') {
    if (await media.hasLibraryImage(websiteId, reference.path)) return reference.path
    const problem = `${echo(reference.path)} is not an image in this site's library; add it with importAsset first`
    throw new EntryFailure('VALIDATION_FAILED', `${field}: ${problem}.`, { [field]: problem })
  }
  try {
    if (reference.kind === 'upload') return (await media.importUpload(principal, websiteId, collectionId, reference.uploadId)).url
    return (await media.importImage(websiteId, collectionId, reference.url)).url
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    if (reference.kind === 'url') {
      throw new EntryFailure('IMAGE_IMPORT_FAILED', `The image ${echo(reference.url)} of ${field} could not be imported: ${error.message}`, {
        [field]: `image ${echo(reference.url)} could not be imported (${error.code})`,
      })
    }
    // Nothing was fetched: the value itself names no usable image.
    const problem = reference.kind === 'upload' ? uploadProblem(reference.uploadId, error) : error.message.replace(/\.$/, '')
    throw new EntryFailure('VALIDATION_FAILED', `${field}: ${problem}.`, { [field]: problem })
  }
}

/** Why an upload cannot be used, naming it as the entry named it. */
function uploadProblem(uploadId: string, error: AppError): string {
  const why = error.fields?.uploadId
  return why ? `upload:${uploadId} ${why}` : `upload:${uploadId}: ${error.message.replace(/\.$/, '')}`
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
