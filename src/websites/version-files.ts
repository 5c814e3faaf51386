/**
 * A site's files as sets callers name by a ref: a version (its id or its number), or a set
 * another feature answers for (a draft, `drf_…`, through a FileSetSource). One file of a set is
 * read back as text or base64; two sets are compared file by file, with unified diffs of the
 * changed text files. Owners and editors only; reading changes nothing.
 */
import type { BlobStore, StoredFile } from '../blobs/blob-store.ts'
import type { FileSetKind } from '../core/enums.ts'
import { notFound } from '../core/errors.ts'
import { COMPARISON_LIMITS, TEXT_DIFF_LIMITS } from '../core/limits.ts'
import type { Principal } from '../core/principal.ts'
import { quoted } from '../core/text.ts'
import type { VisibleWebsite, WebsiteAccess } from '../db/access.ts'
import type { FileChangeView } from '../editing/editing.schemas.ts'
import { compareFiles, textDiff } from '../editing/file-changes.ts'
import { type FileContent, fileContent, isTextFile, type LineRange, textOfFile } from '../editing/file-views.ts'
import { requireVersion, type VersionRef } from './version-refs.ts'
import type { WebsitesRepository } from './websites.repository.ts'

/** What a ref resolved to: a version (`id` its job id), or a draft (`id` its draft id, `version` the number of its base). */
export interface FileSetLabel {
  kind: FileSetKind
  id: string
  version: number
}

export interface FileSet {
  label: FileSetLabel
  files: StoredFile[]
}

/**
 * The sets of a site's files named by refs that start with `prefix` (a draft's `drf_`), answered
 * by the feature that keeps them, for a caller who may see the site. `filesOf` throws NOT_FOUND
 * when the site has no such set.
 */
export interface FileSetSource {
  prefix: string
  filesOf(principal: Principal, websiteId: string, ref: string): Promise<FileSet>
}

export interface VersionFilesOptions {
  access: WebsiteAccess
  repo: WebsitesRepository
  blobs: BlobStore
  /** The sets of files other than versions (drafts); a ref of none of their prefixes names a version. */
  otherSources: readonly FileSetSource[]
}

export interface FileSetComparison {
  from: FileSetLabel
  to: FileSetLabel
  files: FileChangeView[]
}

export class VersionFiles {
  constructor(private readonly options: VersionFilesOptions) {}

  /** One file of a set, as text (a range of lines when asked for) or base64; NOT_FOUND for a path the set lacks. */
  async read(principal: Principal, websiteId: string, ref: VersionRef, path: string, range: LineRange = {}): Promise<FileContent> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const set = await this.resolve(principal, site, ref)
    const file = set.files.find((f) => f.path === path)
    if (!file) throw notFound(`File ${quoted(path, 200)} of ${setName(set.label)}`)
    return fileContent(file, await this.options.blobs.get(file.hash), range)
  }

  /**
   * What changed from one set to the other, unchanged files left out: changed text files (text as
   * file-views.ts reads it, valid UTF-8 on both sides) with a unified diff, or `diffTruncated`
   * when it would be too large to show or the comparison has spent its budget.
   */
  async compare(principal: Principal, websiteId: string, fromRef: VersionRef, toRef: VersionRef): Promise<FileSetComparison> {
    const site = await this.options.access.requireSite(principal, websiteId, 'see')
    const [from, to] = await Promise.all([this.resolve(principal, site, fromRef), this.resolve(principal, site, toRef)])
    return { from: from.label, to: to.label, files: await this.changesBetween(from.files, to.files) }
  }

  /** The files a ref names among the site's versions, or among the sets of the source its prefix picks. */
  private async resolve(principal: Principal, site: VisibleWebsite, ref: VersionRef): Promise<FileSet> {
    if (typeof ref === 'string') {
      const source = this.options.otherSources.find((s) => ref.startsWith(s.prefix))
      if (source) return source.filesOf(principal, site.id, ref)
    }
    const version = await requireVersion(this.options.repo, site.id, ref)
    const rows = await this.options.repo.filesOf([version.id])
    return {
      label: { kind: 'version', id: version.id, version: version.number },
      files: rows.map((row) => ({ path: row.path, hash: row.hash, size: Number(row.size), contentType: row.content_type })),
    }
  }

  private async changesBetween(before: StoredFile[], after: StoredFile[]): Promise<FileChangeView[]> {
    const beforeByPath = new Map(before.map((f) => [f.path, f]))
    const afterByPath = new Map(after.map((f) => [f.path, f]))
    const started = Date.now()
    let diffChars = 0
    const views: FileChangeView[] = []
    for (const change of compareFiles(before, after)) {
      const old = beforeByPath.get(change.path)
      const now = afterByPath.get(change.path)
      if (change.status !== 'changed' || !old || !now || !isTextFile(old) || !isTextFile(now)) {
        views.push(change)
        continue
      }
      const spent = diffChars >= COMPARISON_LIMITS.maxTotalDiffChars || Date.now() - started >= COMPARISON_LIMITS.maxTotalMs
      const tooLarge = Math.max(old.size, now.size) > TEXT_DIFF_LIMITS.maxInputBytes
      if (spent || tooLarge) {
        views.push({ ...change, diffTruncated: true })
        continue
      }
      const [oldText, newText] = await Promise.all([this.textOf(old), this.textOf(now)])
      // Text types whose bytes are not UTF-8 are read back as base64: no lines to compare.
      if (oldText === null || newText === null) {
        views.push(change)
        continue
      }
      const diff = textDiff(change.path, oldText, newText, TEXT_DIFF_LIMITS)
      diffChars += diff.diff?.length ?? 0
      views.push({ ...change, ...diff })
    }
    return views
  }

  private async textOf(file: StoredFile): Promise<string | null> {
    return textOfFile(file, await this.options.blobs.get(file.hash))
  }
}

/** A set as messages name it: `version 3`, `draft drf_… (on version 3)`. */
function setName(label: FileSetLabel): string {
  return label.kind === 'version' ? `version ${label.version}` : `draft ${label.id} (on version ${label.version})`
}
