/**
 * What changed between two sets of site files (two versions, or a version and a draft), told by
 * content hash: a path only in the newer set whose bytes left another path is a move, not an add
 * and a remove. Changed text files get a unified diff, bounded in size and in work, so a large or
 * pathological pair answers "too large to show" instead of holding the event loop.
 */
import { createRequire } from 'node:module'
import type * as Diff from 'diff'
import type { FileChangeStatus } from '../core/enums.ts'

/** The diff library, loaded on the first text comparison (most processes never make one). */
let diffLibrary: typeof Diff | undefined
const loadDiff = (): typeof Diff => (diffLibrary ??= createRequire(import.meta.url)('diff') as typeof Diff)

export interface SiteFile {
  path: string
  hash: string
  size: number
}

export type { FileChangeStatus }

export interface FileChange {
  path: string
  status: FileChangeStatus
  /** For a move: where the bytes were. */
  previousPath?: string
  sizeBefore?: number
  sizeAfter?: number
}

/** Every file that differs between `before` and `after`, by path; unchanged files are left out. */
export function compareFiles(before: readonly SiteFile[], after: readonly SiteFile[]): FileChange[] {
  const old = new Map(before.map((file) => [file.path, file]))
  const now = new Map(after.map((file) => [file.path, file]))
  const changes: FileChange[] = []
  // Paths that are gone, by their bytes: a new path with the same bytes takes the first of them.
  const goneByHash = new Map<string, SiteFile[]>()
  for (const file of before) {
    if (now.has(file.path)) continue
    const same = goneByHash.get(file.hash)
    if (same) same.push(file)
    else goneByHash.set(file.hash, [file])
  }
  for (const file of after) {
    const previous = old.get(file.path)
    if (previous) {
      if (previous.hash !== file.hash) changes.push({ path: file.path, status: 'changed', sizeBefore: previous.size, sizeAfter: file.size })
      continue
    }
    const source = goneByHash.get(file.hash)?.shift()
    if (source) changes.push({ path: file.path, status: 'moved', previousPath: source.path, sizeBefore: source.size, sizeAfter: file.size })
    else changes.push({ path: file.path, status: 'added', sizeAfter: file.size })
  }
  for (const files of goneByHash.values()) for (const file of files) changes.push({ path: file.path, status: 'removed', sizeBefore: file.size })
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/** Each path of `after` with how it differs from `before`: `unchanged` when its bytes are the same. */
export function changeOfEachFile(before: readonly SiteFile[], after: readonly SiteFile[]): Map<string, 'unchanged' | Exclude<FileChangeStatus, 'removed'>> {
  const changed = new Map(compareFiles(before, after).map((change) => [change.path, change.status]))
  return new Map(
    after.map((file) => {
      const status = changed.get(file.path)
      return [file.path, status === undefined || status === 'removed' ? 'unchanged' : status]
    }),
  )
}

export interface TextDiffLimits {
  /** Texts larger than this (either side, in bytes) are not compared. */
  maxInputBytes: number
  /** A diff longer than this (in characters) is not returned. */
  maxDiffChars: number
  /** Lines inserted plus removed beyond which the comparison stops. */
  maxEditLines: number
  /** Milliseconds the comparison may take before it stops. */
  timeoutMs: number
}

/** A unified diff of two texts, or `truncated` when it would exceed the limits. */
export function textDiff(path: string, before: string, after: string, limits: TextDiffLimits): { diff?: string; diffTruncated?: true } {
  if (Buffer.byteLength(before) > limits.maxInputBytes || Buffer.byteLength(after) > limits.maxInputBytes) return { diffTruncated: true }
  const diff = loadDiff().createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, {
    context: 3,
    maxEditLength: limits.maxEditLines,
    timeout: limits.timeoutMs,
  })
  if (diff === undefined || diff.length > limits.maxDiffChars) return { diffTruncated: true }
  // The `Index:` line and separator createTwoFilesPatch starts with are not part of a unified diff.
  return { diff: diff.slice(diff.indexOf('--- ')) }
}
