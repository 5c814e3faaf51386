/**
 * The files of a draft, written one at a time: each write is checked at once against every rule of
 * a file, as a publish would check it (PublishPipeline.storeFile: path, encoding, size, content),
 * and against the bundle limits for the draft as a whole (files, bytes, pages); a refused write
 * changes nothing. Edits and moves read a file and write it back: on one instance those of a
 * draft run one after another, and each is recorded only if the file is still what it read (a
 * write on another instance may have come between) and done again on the new content otherwise,
 * so two writes to one draft never lose one.
 */
import { type BundleLimits, formatSize } from '../core/limits.ts'
import { AppError, type PublishViolation, validationFailed } from '../core/errors.ts'
import { mayRead } from '../core/capabilities.ts'
import type { Principal } from '../core/principal.ts'
import { quoted } from '../core/text.ts'
import type { Executor } from '../db/access.ts'
import type { DraftFileRow } from '../db/types.ts'
import { type FileContent, fileContent, isTextFile, type LineRange, textOfFile } from '../editing/file-views.ts'
import { applyEdits, editContext, type TextEdit } from '../editing/text-edits.ts'
import { contentTypeFor, HTML_CONTENT_TYPE } from '../publishing/content-rules.ts'
import { sourceProblem } from '../publishing/file-references.ts'
import type { StoredBundle } from '../publishing/publish-pipeline.ts'
import type { DraftRecords, FoundDraft } from './draft-records.ts'
import type { DraftFileMove, DraftFileWrite, DraftFileWritten } from './drafts.schemas.ts'

/** Times an edit or a move is done again because the file changed between reading and recording it. */
const READ_WRITE_ATTEMPTS = 5

/** Texts of files kept after an edit for the next edit of the same bytes: how many, and the longest kept. */
const RECENT_TEXTS = 32
const RECENT_TEXT_MAX_CHARS = 256 * 1024

/** Thrown inside a recording transaction when the file read is no longer the draft's: it rolls back, and the change is done again. */
class ChangedMeanwhile extends Error {}

/** How a change makes the draft grow, in the quantities the bundle limits bound. */
interface Growth {
  files: number
  bytes: number
  pages: number
}

export class DraftFiles {
  /** Per draft: the read-then-write change of this instance running now, which the next one waits for. */
  private readonly running = new Map<string, Promise<void>>()
  /** The texts of files edited last, by hash (an agent edits one file again and again), the newest last. */
  private readonly recentTexts = new Map<string, string>()

  constructor(private readonly records: DraftRecords) {}

  /** Writes one file (a new one or a replacement): `created` tells which. */
  async write(
    principal: Principal,
    websiteId: string,
    draftId: string,
    path: string,
    input: DraftFileWrite,
  ): Promise<{ created: boolean; file: DraftFileWritten }> {
    const problem = sourceProblem(input)
    if (problem) throw validationFailed({ [problem.field === '' ? 'body' : problem.field]: problem.message })
    const found = await this.records.require(principal, websiteId, draftId)
    const stored = await this.records.options.pipeline.storeFile({ ...input, path }, await this.records.targetOf(principal, found.site))
    return this.records.record(found, stored, async (trx) => {
      const previous = await this.records.options.repo.findFile(found.draft.id, path, trx)
      const row = await this.put(trx, found, stored, previous)
      return { result: { created: previous === undefined, file: writtenView(row, stored) }, dropped: droppedBy(previous, row) }
    })
  }

  /** Replaces each edit's oldText, which must occur exactly once, in a text file (text-edits.ts). */
  async edit(principal: Principal, websiteId: string, draftId: string, path: string, edits: readonly TextEdit[]): Promise<DraftFileWritten> {
    const found = await this.records.require(principal, websiteId, draftId)
    // The path stays the one written before, so no collection path need be looked up: a
    // collection made since that takes the path is refused at publish, with the whole bundle.
    const target = { userId: principal.userId, sites: principal.sites, collectionNames: [] }
    return this.readAndWrite(found, async () => {
      const file = await this.requireFile(found, path)
      const kind = { path, contentType: file.content_type }
      const text = (isTextFile(kind) ? this.recentTexts.get(file.hash) : undefined) ?? textOfFile(kind, await this.records.options.blobs.get(file.hash))
      if (text === null) {
        throw validationFailed({
          path: `is not a text file (${file.content_type}, or not valid UTF-8): only text files can be edited; write it whole instead`,
        })
      }
      const edited = await applyEdits(path, text, edits, editContext(mayRead(principal)))
      const stored = await this.records.options.pipeline.storeFile({ path, content: edited, contentType: file.content_type }, target)
      const written = await this.records.record(found, stored, async (trx) => {
        const current = await this.currentFile(trx, found, file)
        const row = await this.put(trx, found, stored, current)
        return { result: writtenView(row, stored), dropped: droppedBy(current, row) }
      })
      this.rememberText(written.sha256, edited)
      return written
    })
  }

  /** Renames one file; its bytes stay, and it is checked again at its new path. */
  async move(principal: Principal, websiteId: string, draftId: string, { from, to }: DraftFileMove): Promise<DraftFileWritten> {
    if (from === to) throw validationFailed({ to: 'is the same path as from' })
    const found = await this.records.require(principal, websiteId, draftId)
    const target = await this.records.targetOf(principal, found.site)
    const { repo, pipeline } = this.records.options
    return this.readAndWrite(found, async () => {
      const file = await this.requireFile(found, from)
      if (await repo.findFile(found.draft.id, to)) throw destinationTaken(to)
      // A type the old path implied is implied by the new path; one given explicitly stays.
      const contentType = file.content_type === contentTypeFor(from) ? contentTypeFor(to) : file.content_type
      const stored = await pipeline.storeFile({ path: to, contentType, stored: { hash: file.hash, size: Number(file.size) } }, target)
      return this.records.record(found, stored, async (trx) => {
        const current = await this.currentFile(trx, found, file)
        if (await repo.findFile(found.draft.id, to, trx)) throw destinationTaken(to)
        await repo.deleteFile(trx, found.draft.id, from)
        const row = await this.put(trx, found, stored, undefined, {
          files: 0,
          bytes: 0,
          pages: isPage(stored.files[0]!.contentType) - isPage(current.content_type),
        })
        return { result: writtenView(row, stored), dropped: [] }
      })
    })
  }

  /** Removes one file. */
  async delete(principal: Principal, websiteId: string, draftId: string, path: string): Promise<void> {
    const found = await this.records.require(principal, websiteId, draftId)
    const { repo } = this.records.options
    await this.records.record(found, null, async (trx) => {
      const file = await repo.findFile(found.draft.id, path, trx)
      if (!file || !(await repo.deleteFile(trx, found.draft.id, path))) throw fileNotFound(path)
      return { result: undefined, dropped: [file.hash] }
    })
  }

  /** One file's content: text (a range of its lines when asked), or base64. */
  async read(principal: Principal, websiteId: string, draftId: string, path: string, range: LineRange): Promise<FileContent> {
    const found = await this.records.require(principal, websiteId, draftId)
    const file = await this.requireFile(found, path)
    const bytes = await this.records.options.blobs.get(file.hash)
    return fileContent({ path: file.path, hash: file.hash, size: Number(file.size), contentType: file.content_type }, bytes, range)
  }

  /**
   * Runs a read-then-write change of a draft after the one of this instance before it, and again
   * while the file changed between its read and its recording.
   */
  private async readAndWrite<T>({ draft }: FoundDraft, change: () => Promise<T>): Promise<T> {
    const attempts = async (): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await change()
        } catch (error) {
          if (!(error instanceof ChangedMeanwhile) || attempt >= READ_WRITE_ATTEMPTS) throw error
        }
      }
    }
    const before = this.running.get(draft.id) ?? Promise.resolve()
    const result = before.then(attempts)
    const done = result.then(
      () => {},
      () => {},
    )
    this.running.set(draft.id, done)
    try {
      return await result
    } finally {
      if (this.running.get(draft.id) === done) this.running.delete(draft.id)
    }
  }

  /** Keeps the text of a file just stored: valid Unicode (the rules refuse any other), so its bytes decode back to exactly it. */
  private rememberText(hash: string, text: string): void {
    if (text.length > RECENT_TEXT_MAX_CHARS) return
    this.recentTexts.delete(hash)
    this.recentTexts.set(hash, text)
    if (this.recentTexts.size > RECENT_TEXTS) this.recentTexts.delete(this.recentTexts.keys().next().value!)
  }

  private async requireFile({ draft }: FoundDraft, path: string): Promise<DraftFileRow> {
    const file = await this.records.options.repo.findFile(draft.id, path)
    if (!file) throw fileNotFound(path)
    return file
  }

  /** The file as it is in the transaction: NOT_FOUND when it is gone, ChangedMeanwhile when its bytes are not those read. */
  private async currentFile(trx: Executor, { draft }: FoundDraft, read: DraftFileRow): Promise<DraftFileRow> {
    const current = await this.records.options.repo.findFile(draft.id, read.path, trx)
    if (!current) throw fileNotFound(read.path)
    if (current.hash !== read.hash || current.content_type !== read.content_type) throw new ChangedMeanwhile('changed meanwhile')
    return current
  }

  /**
   * Records the stored file at its path, in place of `previous`, and checks the draft against the
   * bundle limits: a change that makes it grow past one is refused (PUBLISH_INVALID, rolled back).
   */
  private async put(trx: Executor, { draft }: FoundDraft, stored: StoredBundle, previous: DraftFileRow | undefined, growth?: Growth): Promise<DraftFileRow> {
    const { repo, config } = this.records.options
    const file = stored.files[0]!
    const row: DraftFileRow = { draft_id: draft.id, path: file.path, hash: file.hash, size: file.size, content_type: file.contentType }
    await repo.putFile(trx, row)
    const grown = growth ?? {
      files: previous ? 0 : 1,
      bytes: file.size - Number(previous?.size ?? 0),
      pages: isPage(file.contentType) - (previous ? isPage(previous.content_type) : 0),
    }
    // A change that grows nothing cannot take the draft past a limit it was within.
    const grows = grown.files > 0 || grown.bytes > 0 || grown.pages > 0
    const violations = grows ? limitViolations(file.path, await repo.totals(trx, draft.id), grown, config.bundleLimits) : []
    if (violations.length > 0) {
      throw new AppError('PUBLISH_INVALID', `Writing ${file.path} would take the draft past the limits of a site; nothing was changed.`, { violations })
    }
    return row
  }
}

const isPage = (contentType: string): number => (contentType === HTML_CONTENT_TYPE ? 1 : 0)

/** The bundle limits a change would break, counted only where it grows: a draft over a limit may still shrink. */
function limitViolations(path: string, totals: { files: number; bytes: number; pages: number }, grown: Growth, limits: BundleLimits): PublishViolation[] {
  const found: PublishViolation[] = []
  if (grown.files > 0 && totals.files > limits.maxFiles) {
    found.push({
      code: 'TOO_MANY_FILES',
      path,
      detail: `${totals.files} files`,
      message: `The draft would hold ${totals.files} files; a site may have at most ${limits.maxFiles}: delete or combine files first.`,
    })
  }
  if (grown.bytes > 0 && totals.bytes > limits.maxBundleBytes) {
    found.push({
      code: 'BUNDLE_TOO_LARGE',
      path,
      detail: `${totals.bytes} bytes`,
      message: `The draft's files would come to ${totals.bytes} bytes; a site may have at most ${formatSize(limits.maxBundleBytes)} in all: shrink or delete files first.`,
    })
  }
  if (grown.pages > 0 && totals.pages > limits.maxHtmlPages) {
    found.push({
      code: 'TOO_MANY_PAGES',
      path,
      detail: `${totals.pages} HTML pages`,
      message: `The draft would hold ${totals.pages} HTML pages; a site may have at most ${limits.maxHtmlPages}: merge or delete pages first.`,
    })
  }
  return found
}

/** The blob a write stopped holding at its path, if the bytes changed. */
const droppedBy = (previous: DraftFileRow | undefined, row: DraftFileRow): string[] => (previous && previous.hash !== row.hash ? [previous.hash] : [])

const writtenView = (row: DraftFileRow, stored: StoredBundle): DraftFileWritten => ({
  path: row.path,
  size: Number(row.size),
  sha256: row.hash,
  contentType: row.content_type,
  ...(stored.warnings.length > 0 ? { warnings: stored.warnings } : {}),
})

const fileNotFound = (path: string): AppError => new AppError('NOT_FOUND', `The draft has no file ${quoted(path)}.`)

const destinationTaken = (to: string) => validationFailed({ to: `is already a file of the draft (${quoted(to)}): delete it first, or write to it` })
