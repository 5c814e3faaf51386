/**
 * 8. Drafts: a one-word change to a published 40-file site (about 180 KB) made as an agent makes
 * it, start a draft from the live version, edit one word of index.html (PATCH edits), publish the
 * draft, timed as one sequence; beside it, a new version of a one-file site (a fresh 4 KB page),
 * the smallest publish there is. The two alternate, each on a settled server. The sequence should
 * cost little more than that publish, whatever the size of the site.
 *
 * And what each edit-and-publish adds to the blob store (its files before and after, once the
 * server has settled): exactly the edited file's new bytes, as one blob, plus the precompressed
 * variants the store keeps for it (br and gzip, made for compressible types of 256 B or more and
 * each kept only when it saves 10%: computed here with the store's own compressVariants). No other
 * file is added, changed or removed.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { blobFileName } from '../src/blobs/blob-store.ts'
import { compressVariants } from '../src/blobs/compression.ts'
import { blobFiles } from './lib/blob-files.ts'
import { type Child, makeTempDir, spawnChild } from './lib/children.ts'
import { type BundleFile, htmlPage, ordinarySite } from './lib/content.ts'
import { api } from './lib/http.ts'
import { percentile, timed } from './lib/load.ts'
import { plinthEnv, SETTINGS } from './lib/settings.ts'

/** The draft sequence's median over the one-file publish's, at most. */
export const DRAFT_RATIO_TARGET = 1.5

/** Untimed rounds of both before the measured ones: the paths, the content-scan threads and the heap warmed up. */
const WARM_UP_ROUNDS = 3

/** The page edited, and the word of it each round changes: `Edition {n} ` becomes `Edition {n + 1} `. */
const EDITED = 'index.html'
const edition = (n: number) => `Edition ${n} `

export interface Timing {
  p50: number
  p90: number
  max: number
}

export interface DraftsResult {
  iterations: number
  siteFiles: number
  siteBytes: number
  /** Start, edit and publish, one after another. */
  sequence: Timing
  steps: { start: Timing; edit: Timing; publish: Timing }
  /** A new version of the one-file site. */
  onePublish: Timing
  /** sequence p50 / onePublish p50. */
  ratio: number
  blobs: {
    /** Rounds whose added blob files were exactly the edited file's blob and its variants. */
    exact: number
    /** Blob files and bytes all rounds added, and those expected. */
    filesAdded: number
    bytesAdded: number
    filesExpected: number
    bytesExpected: number
    /** One round's expected figures, for the record: identity, br and gzip bytes. */
    example: { identity: number; br: number | null; gzip: number | null }
  }
}

const timing = (ms: number[]): Timing => ({ p50: percentile(ms, 50), p90: percentile(ms, 90), max: Math.max(...ms) })
const line = (label: string, t: Timing, n: number) =>
  `  ${label.padEnd(46)} p50 ${t.p50.toFixed(1).padStart(7)} ms   p90 ${t.p90.toFixed(1).padStart(7)} ms   max ${t.max.toFixed(1).padStart(7)} ms   (${n})`

/** The blob files (by name, with their sizes) one edited text adds: its bytes, and the variants the store keeps for it. */
async function expectedBlobs(text: string, contentType: string): Promise<{ files: Map<string, number>; br: number | null; gzip: number | null }> {
  const bytes = Buffer.from(text)
  const hash = createHash('sha256').update(bytes).digest('hex')
  const variants = await compressVariants(bytes, contentType)
  const files = new Map([[blobFileName(hash, 'identity'), bytes.length]])
  if (variants.br) files.set(blobFileName(hash, 'br'), variants.br.length)
  if (variants.gzip) files.set(blobFileName(hash, 'gzip'), variants.gzip.length)
  return { files, br: variants.br?.length ?? null, gzip: variants.gzip?.length ?? null }
}

/** The blob files added (by name, with their sizes) and removed between two listings of the store. */
function blobChanges(before: Map<string, number>, after: Map<string, number>): { added: Map<string, number>; removed: string[] } {
  const added = new Map<string, number>()
  for (const [file, size] of after) if (before.get(file) !== size) added.set(path.basename(file), size)
  const removed = [...before.keys()].filter((file) => !after.has(file))
  return { added, removed }
}

const sameFiles = (a: Map<string, number>, b: Map<string, number>) => a.size === b.size && [...a].every(([name, size]) => b.get(name) === size)
const total = (files: Map<string, number>) => [...files.values()].reduce((sum, size) => sum + size, 0)

export async function draftsPhase(): Promise<DraftsResult> {
  console.log('\n== 8. A one-word change through a draft ==')
  const iterations = Math.max(1, Math.floor(SETTINGS.publishIterations))
  const dataDir = await makeTempDir('drafts')
  const blobsDir = path.join(dataDir, 'blobs')
  const plinth = await spawnChild('plinth', 'plinth-server.ts', plinthEnv(dataDir))
  const token = plinth.info.token as string
  try {
    const site = ordinarySite()
    const unmarked = Buffer.byteLength(site.files.find((file) => file.path === EDITED)!.content)
    let text = insertEdition(site.files)
    const siteBytes = site.bytes + Buffer.byteLength(text) - unmarked
    const created = await api(plinth.port, token, 'POST', '/v1/websites', { name: 'Bench drafts', category: 'other', slug: 'bench-drafts', files: site.files })
    const sitePath = `/v1/websites/${created.websiteId}`
    const oneFile = await api(plinth.port, token, 'POST', '/v1/websites', {
      name: 'Bench one file',
      category: 'other',
      slug: 'bench-one-file',
      files: onePage('first'),
    })
    const oneFileVersions = `/v1/websites/${oneFile.websiteId}/versions`
    console.log(
      `  site: ${site.files.length} files, ${siteBytes.toLocaleString('en-US')} B (15 HTML pages, 5 CSS, 5 JS, 15 images); the one-file site: one fresh 4 KB page a version`,
    )

    const sequence: number[] = []
    const steps = { start: [] as number[], edit: [] as number[], publish: [] as number[] }
    const onePublish: number[] = []
    const blobs = {
      exact: 0,
      filesAdded: 0,
      bytesAdded: 0,
      filesExpected: 0,
      bytesExpected: 0,
      example: { identity: 0, br: null as number | null, gzip: null as number | null },
    }
    for (let i = 0; i < WARM_UP_ROUNDS + iterations; i++) {
      const measured = i >= WARM_UP_ROUNDS
      const edited = text.replace(edition(i), edition(i + 1))

      await plinth.ask('settled')
      const before = await blobFiles(blobsDir)
      const started = performance.now()
      const answer = await draftSequence(plinth, token, sitePath, edition(i), edition(i + 1), measured ? steps : null)
      if (measured) sequence.push(performance.now() - started)
      text = edited
      if (answer.sha256 !== createHash('sha256').update(edited).digest('hex'))
        throw new Error(`the edit stored other bytes than expected: ${JSON.stringify(answer)}`)

      await plinth.ask('settled')
      const { added, removed } = blobChanges(before, await blobFiles(blobsDir))
      const expected = await expectedBlobs(edited, answer.contentType)
      const exact = removed.length === 0 && sameFiles(added, expected.files)
      if (!exact) {
        console.log(
          `  round ${i}: blob files added ${JSON.stringify([...added])}, removed ${JSON.stringify(removed)}; expected ${JSON.stringify([...expected.files])}`,
        )
      }
      if (measured) {
        blobs.exact += exact ? 1 : 0
        blobs.filesAdded += added.size
        blobs.bytesAdded += total(added)
        blobs.filesExpected += expected.files.size
        blobs.bytesExpected += total(expected.files)
        blobs.example = { identity: Buffer.byteLength(edited), br: expected.br, gzip: expected.gzip }
      }

      await plinth.ask('settled')
      const published = await timed(measured ? onePublish : [], () => api(plinth.port, token, 'POST', oneFileVersions, { files: onePage(`round ${i}`) }))
      if (!published.isCurrent) throw new Error(`the one-file version is not live: ${JSON.stringify(published)}`)
    }

    const result: DraftsResult = {
      iterations,
      siteFiles: site.files.length,
      siteBytes,
      sequence: timing(sequence),
      steps: { start: timing(steps.start), edit: timing(steps.edit), publish: timing(steps.publish) },
      onePublish: timing(onePublish),
      ratio: percentile(sequence, 50) / percentile(onePublish, 50),
      blobs,
    }
    console.log(line('start + edit + publish a draft', result.sequence, iterations))
    console.log(line('  start a draft from the live version', result.steps.start, iterations))
    console.log(line('  edit one word of index.html (PATCH edits)', result.steps.edit, iterations))
    console.log(line('  publish the draft', result.steps.publish, iterations))
    console.log(line('a new version of a one-file site (4 KB page)', result.onePublish, iterations))
    console.log(`    each sequence: ${sequence.map((ms) => ms.toFixed(0)).join(', ')} ms`)
    console.log(`    each one-file: ${onePublish.map((ms) => ms.toFixed(0)).join(', ')} ms`)
    console.log(
      `  sequence p50 / one-file publish p50: ${result.ratio.toFixed(2)} (target <= ${DRAFT_RATIO_TARGET}): ${result.ratio <= DRAFT_RATIO_TARGET ? 'PASS' : 'FAIL'}`,
    )
    const { example } = blobs
    console.log(
      `  blob store, per edit-and-publish: expected the edited page's ${example.identity.toLocaleString('en-US')} B` +
        ` + br ${example.br === null ? 'none' : `${example.br} B`} + gzip ${example.gzip === null ? 'none' : `${example.gzip} B`} (one round);` +
        ` over ${iterations} rounds ${blobs.filesAdded} files, ${blobs.bytesAdded.toLocaleString('en-US')} B added, ${blobs.filesExpected} files, ${blobs.bytesExpected.toLocaleString('en-US')} B expected;` +
        ` exactly those in ${blobs.exact} of ${iterations} rounds: ${blobs.exact === iterations ? 'PASS' : 'FAIL'}`,
    )
    return result
  } finally {
    await plinth.stop()
  }
}

/** The edited page's text once its edition marker is in it: a paragraph at the top of its main. */
function insertEdition(files: BundleFile[]): string {
  const page = files.find((file) => file.path === EDITED)!
  page.content = page.content.replace('<main>\n', `<main>\n<p class="edition">${edition(0)}of the weekly news</p>\n`)
  return page.content
}

const onePage = (title: string) => [{ path: 'index.html', content: htmlPage(4096, `One file ${title} ${Math.random()}`) }]

/** Starts a draft of the live version, edits one word of the page, publishes the draft: the edit's answer. */
async function draftSequence(
  plinth: Child,
  token: string,
  sitePath: string,
  oldText: string,
  newText: string,
  steps: { start: number[]; edit: number[]; publish: number[] } | null,
): Promise<{ sha256: string; size: number; contentType: string }> {
  const draft = await timed(steps?.start ?? [], () => api(plinth.port, token, 'POST', `${sitePath}/drafts`, {}))
  const draftPath = `${sitePath}/drafts/${draft.draftId}`
  const edited = await timed(steps?.edit ?? [], () => api(plinth.port, token, 'PATCH', `${draftPath}/files/${EDITED}`, { edits: [{ oldText, newText }] }))
  const published = await timed(steps?.publish ?? [], () => api(plinth.port, token, 'POST', `${draftPath}/publish`, {}))
  if (!published.isCurrent) throw new Error(`the draft's version is not live: ${JSON.stringify(published)}`)
  return edited
}
