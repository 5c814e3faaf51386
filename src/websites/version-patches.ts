/**
 * createWebsiteVersion as REST and MCP call it: a new version from the complete bundle, or from a
 * base version's files with changes applied (a patch). A patch sends the files it leaves alone to
 * the publish as references to their stored bytes, and the files it writes or edits as content,
 * so the version it makes is the very one the whole bundle would make, checked by the same rules.
 * Built on a base, a publish is refused with VERSION_CONFLICT while a newer version exists.
 */
import type { BlobStore } from '../blobs/blob-store.ts'
import { AppError, validationFailed } from '../core/errors.ts'
import { mayRead } from '../core/capabilities.ts'
import type { Principal } from '../core/principal.ts'
import { quoted } from '../core/text.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { VersionRow } from '../db/types.ts'
import { isTextFile, textOfFile } from '../editing/file-views.ts'
import { applyEdits, type EditContext, editContext } from '../editing/text-edits.ts'
import { contentTypeFor } from '../publishing/content-rules.ts'
import type { PublishFileInput } from '../publishing/publishing.schemas.ts'
import { requireVersion } from './version-refs.ts'
import type { PublishBase, Published, WebsitePublishing } from './website-publishing.ts'
import type { WebsitesRepository } from './websites.repository.ts'
import type { VersionChange } from './version-changes.schemas.ts'
import type { PublishVersionRequest, PublishVersionResult } from './websites.schemas.ts'

export interface VersionPatchesOptions {
  access: WebsiteAccess
  repo: WebsitesRepository
  /** Where the base's files are read from when a change edits them. */
  blobs: BlobStore
  publishing: WebsitePublishing
}

/** A file of the version being made, as the publish will take it (its path is the key it is kept under). */
type WorkingFile = Omit<PublishFileInput, 'path'>

type EditChange = Extract<VersionChange, { op: 'edit' }>

export class VersionPatches {
  constructor(private readonly options: VersionPatchesOptions) {}

  /** The website's next version: `files` as given, or the files of `baseVersion` with `changes` applied. */
  async publish(principal: Principal, websiteId: string, request: PublishVersionRequest): Promise<Published<PublishVersionResult>> {
    const { access, repo, publishing } = this.options
    assertOneWay(request)
    const { files, changes, baseVersion, overwrite = false, message, promote, vendor, expiresAt } = request
    if (baseVersion === undefined) return publishing.publishVersion(principal, websiteId, { files: files!, message, promote, vendor, expiresAt })
    const site = await access.requireSite(principal, websiteId, 'edit')
    const base = await requireVersion(repo, site.id, baseVersion)
    const on: PublishBase = { number: base.number, overwrite }
    if (changes === undefined) return publishing.publishVersionOf(principal, site, { files: files!, message, promote, vendor, expiresAt }, on)
    // Said before any change is applied: a change that fails on a stale base is better made again on the newest.
    if (!overwrite && site.last_version_number > base.number) throw await publishing.versionConflict(site.id, base.number, site.last_version_number)
    return publishing.publishVersionOf(
      principal,
      site,
      { files: await this.patched(base, changes, mayRead(principal)), message, promote, vendor, expiresAt },
      on,
    )
  }

  /**
   * The files of `base` with the changes applied in order; the first that does not apply refuses
   * them all (quoting the base's text only when `quote`: the caller may read it).
   */
  private async patched(base: VersionRow, changes: VersionChange[], quote: boolean): Promise<PublishFileInput[]> {
    const rows = await this.options.repo.filesOf([base.id])
    // A base file keeps its media type, as republishing it by hash would.
    const files = new Map<string, WorkingFile>(rows.map((row) => [row.path, { sha256: row.hash, contentType: row.content_type }]))
    // Bytes an edit may read: the base's own. A put may name any hash; whether the caller may use it is the publish's to check.
    const readable = new Set(rows.map((row) => row.hash))
    const baseName = `version ${base.number}`
    const context = editContext(quote)
    for (const [index, change] of changes.entries()) {
      const field = `changes[${index}]`
      const missing = (path: string) =>
        validationFailed(
          { [field]: `names ${quoted(path)}, which is not a file of ${baseName} as the changes before it left it` },
          `Change ${index + 1} of ${changes.length} (${change.op}) names ${quoted(path)}, which is not a file of ${baseName} as the changes before it left it. Nothing was published.`,
        )
      switch (change.op) {
        case 'put': {
          const { op: _op, path, ...file } = change
          assertOneSource(field, file)
          files.set(path, file)
          break
        }
        case 'delete':
          if (!files.delete(change.path)) throw missing(change.path)
          break
        case 'move': {
          if (change.from === change.to) throw validationFailed({ [field]: 'moves a file onto its own path: to is the same path as from' })
          const file = files.get(change.from)
          if (!file) throw missing(change.from)
          if (files.has(change.to)) throw validationFailed({ [field]: `moves onto ${quoted(change.to)}, which is a file already: delete it first` })
          files.delete(change.from)
          // A media type that was only the old name's is found again from the new name.
          const inferred = file.contentType === contentTypeFor(change.from)
          files.set(change.to, inferred ? { ...file, contentType: undefined } : file)
          break
        }
        case 'edit': {
          const file = files.get(change.path)
          if (!file) throw missing(change.path)
          const text = await this.textNow(field, change.path, file, readable)
          files.set(change.path, { content: await edited(field, index, changes.length, change, text, context), contentType: file.contentType })
          break
        }
      }
    }
    return [...files].map(([path, file]) => ({ path, ...withoutUndefined(file) }))
  }

  /** The text a file holds now, for an edit: VALIDATION_FAILED for a file that is not text, or whose bytes are not the base's or given here. */
  private async textNow(field: string, path: string, file: WorkingFile, readable: ReadonlySet<string>): Promise<string> {
    const contentType = contentTypeFor(path, file.contentType)
    const notText = () => validationFailed({ [field]: `edits ${quoted(path)}, which is not a text file (${contentType}): put its new bytes instead` })
    if (!isTextFile({ path, contentType })) throw notText()
    if (file.content !== undefined && file.contentEncoding !== 'base64') return file.content
    let bytes: Buffer
    if (file.content !== undefined) bytes = Buffer.from(file.content, 'base64')
    else if (file.sha256 !== undefined && readable.has(file.sha256)) bytes = await this.options.blobs.get(file.sha256)
    else throw validationFailed({ [field]: `edits ${quoted(path)}, which an earlier change gives by reference: put it with content instead` })
    const text = textOfFile({ path, contentType }, bytes)
    if (text === null) throw notText()
    return text
  }
}

/** Exactly one way to make the version: the bundle, or changes to a base; `overwrite` only on a base. */
function assertOneWay(request: PublishVersionRequest): void {
  const fields: Record<string, string> = {}
  if (request.files !== undefined && request.changes !== undefined) {
    fields.changes = 'cannot come with files: send the complete bundle (files) or changes to baseVersion, not both'
  } else if (request.files === undefined && request.changes === undefined) {
    fields.files = 'is required, unless baseVersion and changes are given instead'
  } else if (request.changes !== undefined && request.baseVersion === undefined) {
    fields.baseVersion = 'is required with changes: the version they apply to (its number or id)'
  }
  if (request.overwrite !== undefined && request.baseVersion === undefined) fields.overwrite = 'is only allowed with baseVersion'
  if (Object.keys(fields).length > 0) throw validationFailed(fields)
}

/** A put's file gives exactly one of content, sha256 and uploadId, and contentEncoding only with content (as a bundle file does). */
function assertOneSource(field: string, file: WorkingFile): void {
  const given = (['content', 'uploadId', 'sha256'] as const).filter((key) => file[key] !== undefined)
  if (given.length !== 1) {
    throw validationFailed({
      [field]: given.length === 0 ? 'needs one of content, uploadId or sha256' : `has ${given.join(' and ')}; give exactly one of content, uploadId or sha256`,
    })
  }
  if (file.contentEncoding !== undefined && file.content === undefined) throw validationFailed({ [`${field}.contentEncoding`]: 'is only allowed with content' })
}

/** The text after an edit change, its refusal naming the change as well as the edit. */
async function edited(field: string, index: number, count: number, change: EditChange, text: string, context: EditContext): Promise<string> {
  try {
    return await applyEdits(change.path, text, change.edits, context)
  } catch (error) {
    if (!(error instanceof AppError) || error.fields === undefined) throw error
    const fields = Object.fromEntries(Object.entries(error.fields).map(([name, message]) => [`${field}.${name}`, message]))
    throw new AppError(error.code, `Change ${index + 1} of ${count}: ${error.message}`, { fields })
  }
}

/** The file without the fields left unset (a move drops a media type by unsetting it). */
const withoutUndefined = (file: WorkingFile): WorkingFile => Object.fromEntries(Object.entries(file).filter(([, value]) => value !== undefined))
