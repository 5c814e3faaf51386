/**
 * 8. Drafts: a one-word change to a published 40-file site (about 180 KB) made as an agent makes
 * it, start a draft from the live version, edit one word of index.html (PATCH edits), publish the
 * draft, each step timed; beside it, a new version of a one-file site (a fresh 4 KB page), the
 * smallest publish there is. The two alternate, each on a settled server. The change (the edit
 * and the publish: what it costs to change one word and make it a version) should cost little
 * more than that publish, whatever the size of the site; starting the draft is opening the
 * working copy, done once for any number of edits, and is reported apart (docs/benchmarks.md).
 * Each step's server CPU is read from outside the server (lib/thread-cpu.ts), which a shared
 * machine disturbs far less than the time.
 *
 * And what each edit-and-publish adds to the blob store (its files before and after, once the
 * server has settled): exactly the edited file's new bytes, as one blob, plus the precompressed
 * variants the store keeps for it (br and gzip, made for compressible types of 256 B or more and
 * each kept only when it saves 10%: computed here with the store's own compressVariants). No other
 * file is added, changed or removed.
 */
import { createHash } from 'node:crypto'
import { copyFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { blobFileName } from '../src/blobs/blob-store.ts'
import { compressVariants } from '../src/blobs/compression.ts'
import { blobFiles } from './lib/blob-files.ts'
import { type Child, makeTempDir, spawnChild } from './lib/children.ts'
import { type BundleFile, htmlPage, ordinarySite } from './lib/content.ts'
import { api } from './lib/http.ts'
import { percentile } from './lib/load.ts'
import { describeProfile, mergeProfiles, type Profile, readProfile } from './lib/profile.ts'
import { plinthEnv, SETTINGS } from './lib/settings.ts'
import { cpuSince, type ThreadCpu, threadCpu } from './lib/thread-cpu.ts'

/** The change's (edit + publish) median over the one-file publish's, at most. */
export const DRAFT_RATIO_TARGET = 1.5

/** Untimed rounds of both before the measured ones: the paths, the content-scan threads and the heap warmed up. */
const WARM_UP_ROUNDS = 3

/** Rounds run under the CPU profiler after the measured ones, when profiles are asked for (BENCH_PROFILE). */
const PROFILED_ROUNDS = 10

/** The page edited, and the word of it each round changes: `Edition {n} ` becomes `Edition {n + 1} `. */
const EDITED = 'index.html'
const edition = (n: number) => `Edition ${n} `

export interface Timing {
  p50: number
  p90: number
  max: number
}

/** One step's figures over the measured rounds. */
export interface StepFigures {
  wall: Timing
  /** Median ms of server CPU, every thread, from the request sent to the answer received. */
  cpu: number
  /** The same, of the main thread (the event loop). */
  mainCpu: number
}

export interface DraftsResult {
  iterations: number
  siteFiles: number
  siteBytes: number
  start: StepFigures
  edit: StepFigures
  publish: StepFigures
  /** The edit and the publish of each round, together: what the target compares. */
  change: StepFigures
  /** A new version of the one-file site. */
  onePublish: StepFigures
  /**
   * Median ms of server CPU, every thread, from the first request to the server settled again
   * (the compressed variants and the spare files a write leaves to make, made): the change's, the one-file publish's.
   */
  settledCpu: { change: number; onePublish: number }
  /** change p50 / onePublish p50. */
  ratio: number
  /** The same, of their median server CPU (info). */
  cpuRatio: number
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

/** Each measured round's time and server CPU of one step. */
class Samples {
  readonly wall: number[] = []
  readonly main: number[] = []
  readonly all: number[] = []

  add(wall: number, cpu: ThreadCpu): void {
    this.wall.push(wall)
    this.main.push(cpu.main)
    this.all.push(cpu.all)
  }

  figures(): StepFigures {
    return { wall: timing(this.wall), cpu: percentile(this.all, 50), mainCpu: percentile(this.main, 50) }
  }
}

/** Runs one step, adding its time and the server's CPU meanwhile to `into` (when measured). */
async function step<T>(pid: number, into: Samples | null, run: () => Promise<T>): Promise<{ result: T; wall: number; cpu: ThreadCpu }> {
  const cpuBefore = threadCpu(pid)
  const started = performance.now()
  const result = await run()
  const wall = performance.now() - started
  const cpu = cpuSince(cpuBefore, threadCpu(pid))
  into?.add(wall, cpu)
  return { result, wall, cpu }
}

const line = (label: string, f: StepFigures, n: number) =>
  `  ${label.padEnd(46)} p50 ${f.wall.p50.toFixed(1).padStart(6)} ms   p90 ${f.wall.p90.toFixed(1).padStart(6)} ms   max ${f.wall.max.toFixed(1).padStart(6)} ms` +
  `   server CPU p50 ${f.cpu.toFixed(1).padStart(5)} ms (main thread ${f.mainCpu.toFixed(1).padStart(5)})   (${n})`

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

    const steps = { start: new Samples(), edit: new Samples(), publish: new Samples(), change: new Samples(), onePublish: new Samples() }
    const settledCpu = { change: [] as number[], onePublish: [] as number[] }
    const blobs = {
      exact: 0,
      filesAdded: 0,
      bytesAdded: 0,
      filesExpected: 0,
      bytesExpected: 0,
      example: { identity: 0, br: null as number | null, gzip: null as number | null },
    }
    const round = async (i: number, measured: boolean, profiles?: StepProfiles) => {
      const edited = text.replace(edition(i), edition(i + 1))

      await plinth.ask('settled')
      const before = await blobFiles(blobsDir)
      const change = await draftChange(plinth, token, sitePath, edition(i), edition(i + 1), measured ? steps : null, profiles)
      await plinth.ask('settled')
      if (measured) settledCpu.change.push(cpuSince(change.cpuBefore, threadCpu(plinth.pid)).all)
      text = edited
      const answer = change.edited
      if (answer.sha256 !== createHash('sha256').update(edited).digest('hex'))
        throw new Error(`the edit stored other bytes than expected: ${JSON.stringify(answer)}`)

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
      const cpuBefore = threadCpu(plinth.pid)
      const published = await profiled(plinth, profiles, 'onePublish', () =>
        step(plinth.pid, measured ? steps.onePublish : null, () => api(plinth.port, token, 'POST', oneFileVersions, { files: onePage(`round ${i}`) })),
      )
      if (!published.result.isCurrent) throw new Error(`the one-file version is not live: ${JSON.stringify(published.result)}`)
      await plinth.ask('settled')
      if (measured) settledCpu.onePublish.push(cpuSince(cpuBefore, threadCpu(plinth.pid)).all)
    }
    for (let i = 0; i < WARM_UP_ROUNDS + iterations; i++) await round(i, i >= WARM_UP_ROUNDS)

    const change = steps.change.figures()
    const onePublish = steps.onePublish.figures()
    const result: DraftsResult = {
      iterations,
      siteFiles: site.files.length,
      siteBytes,
      start: steps.start.figures(),
      edit: steps.edit.figures(),
      publish: steps.publish.figures(),
      change,
      onePublish,
      settledCpu: { change: percentile(settledCpu.change, 50), onePublish: percentile(settledCpu.onePublish, 50) },
      ratio: change.wall.p50 / onePublish.wall.p50,
      cpuRatio: change.cpu / onePublish.cpu,
      blobs,
    }
    console.log(line('start a draft from the live version (apart)', result.start, iterations))
    console.log(line('edit + publish the draft (the change)', result.change, iterations))
    console.log(line('  edit one word of index.html (PATCH edits)', result.edit, iterations))
    console.log(line('  publish the draft', result.publish, iterations))
    console.log(line('a new version of a one-file site (4 KB page)', result.onePublish, iterations))
    console.log(`    each change:   ${steps.change.wall.map((ms) => ms.toFixed(0)).join(', ')} ms`)
    console.log(`    each one-file: ${steps.onePublish.wall.map((ms) => ms.toFixed(0)).join(', ')} ms`)
    console.log(
      `  server CPU until settled again (variants and spare files made), p50: the change ${result.settledCpu.change.toFixed(1)} ms, the one-file publish ${result.settledCpu.onePublish.toFixed(1)} ms`,
    )
    console.log(`  change p50 / one-file publish p50, server CPU (info): ${result.cpuRatio.toFixed(2)}`)
    console.log(
      `  change p50 / one-file publish p50: ${result.ratio.toFixed(2)} (target <= ${DRAFT_RATIO_TARGET}): ${result.ratio <= DRAFT_RATIO_TARGET ? 'PASS' : 'FAIL'}`,
    )
    const { example } = blobs
    console.log(
      `  blob store, per edit-and-publish: expected the edited page's ${example.identity.toLocaleString('en-US')} B` +
        ` + br ${example.br === null ? 'none' : `${example.br} B`} + gzip ${example.gzip === null ? 'none' : `${example.gzip} B`} (one round);` +
        ` over ${iterations} rounds ${blobs.filesAdded} files, ${blobs.bytesAdded.toLocaleString('en-US')} B added, ${blobs.filesExpected} files, ${blobs.bytesExpected.toLocaleString('en-US')} B expected;` +
        ` exactly those in ${blobs.exact} of ${iterations} rounds: ${blobs.exact === iterations ? 'PASS' : 'FAIL'}`,
    )

    if (SETTINGS.profile === '1' || (SETTINGS.profile === 'auto' && result.ratio > DRAFT_RATIO_TARGET)) {
      const profiles: StepProfiles = { dir: dataDir, edit: [], publish: [], onePublish: [] }
      const first = WARM_UP_ROUNDS + iterations
      for (let i = first; i < first + PROFILED_ROUNDS; i++) await round(i, false, profiles)
      console.log(
        `\n  CPU profiles of the main thread, ${PROFILED_ROUNDS} extra rounds (the profiler on during each step only; not part of the figures; each step's samples weighed by its measured main-thread CPU):`,
      )
      for (const [label, files] of [
        ['edit one word (PATCH edits)', profiles.edit],
        ['publish the draft', profiles.publish],
        ['a new version of the one-file site', profiles.onePublish],
      ] as const) {
        console.log(`\n  ${label}, per request:`)
        const merged = mergeProfiles(
          files.map((f) => f.profile),
          files.reduce((sum, f) => sum + f.mainCpuUs, 0),
        )
        for (const text of describeProfile(merged, files.length)) console.log(text)
      }
    }
    return result
  } finally {
    await plinth.stop()
  }
}

/** Where the profiled rounds keep their profiles: per step, one per round, with the main thread's CPU time (µs) meanwhile. */
interface StepProfiles {
  dir: string
  edit: Profiled[]
  publish: Profiled[]
  onePublish: Profiled[]
}

interface Profiled {
  profile: Profile
  mainCpuUs: number
}

let profileCount = 0

/** Runs `run` under the server's CPU profiler when profiles are asked for, adding the profile to those of its step. */
async function profiled<T>(plinth: Child, profiles: StepProfiles | undefined, kind: 'edit' | 'publish' | 'onePublish', run: () => Promise<T>): Promise<T> {
  if (!profiles) return run()
  await plinth.ask('profile-start', { intervalUs: 100 })
  const before = threadCpu(plinth.pid)
  const result = await run()
  const mainCpuUs = 1000 * cpuSince(before, threadCpu(plinth.pid)).main
  const file = path.join(profiles.dir, `${kind}-${profileCount++}.cpuprofile`)
  await plinth.ask('profile-stop', { file }, 60_000)
  profiles[kind].push({ profile: readProfile(file), mainCpuUs })
  if (SETTINGS.profileOut === '') await rm(file, { force: true })
  else await copyFile(file, `${SETTINGS.profileOut.replace(/\.cpuprofile$/, '')}-${path.basename(file)}`)
  return result
}

/** The edited page's text once its edition marker is in it: a paragraph at the top of its main. */
function insertEdition(files: BundleFile[]): string {
  const page = files.find((file) => file.path === EDITED)!
  page.content = page.content.replace('<main>\n', `<main>\n<p class="edition">${edition(0)}of the weekly news</p>\n`)
  return page.content
}

const onePage = (title: string) => [{ path: 'index.html', content: htmlPage(4096, `One file ${title} ${Math.random()}`) }]

/**
 * Starts a draft of the live version, edits one word of the page, publishes the draft, each step
 * measured: the edit's answer, and the server's CPU reading taken before the edit.
 */
async function draftChange(
  plinth: Child,
  token: string,
  sitePath: string,
  oldText: string,
  newText: string,
  steps: Record<'start' | 'edit' | 'publish' | 'change', Samples> | null,
  profiles: StepProfiles | undefined,
): Promise<{ edited: { sha256: string; size: number; contentType: string }; cpuBefore: ThreadCpu }> {
  const draft = await step(plinth.pid, steps?.start ?? null, () => api(plinth.port, token, 'POST', `${sitePath}/drafts`, {}))
  const draftPath = `${sitePath}/drafts/${draft.result.draftId}`
  const cpuBefore = threadCpu(plinth.pid)
  const edit = await profiled(plinth, profiles, 'edit', () =>
    step(plinth.pid, steps?.edit ?? null, () => api(plinth.port, token, 'PATCH', `${draftPath}/files/${EDITED}`, { edits: [{ oldText, newText }] })),
  )
  const publish = await profiled(plinth, profiles, 'publish', () =>
    step(plinth.pid, steps?.publish ?? null, () => api(plinth.port, token, 'POST', `${draftPath}/publish`, {})),
  )
  if (!publish.result.isCurrent) throw new Error(`the draft's version is not live: ${JSON.stringify(publish.result)}`)
  steps?.change.add(edit.wall + publish.wall, { main: edit.cpu.main + publish.cpu.main, all: edit.cpu.all + publish.cpu.all })
  return { edited: edit.result, cpuBefore }
}
