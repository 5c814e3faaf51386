/**
 * Reads V8 .cpuprofile files (main thread of a server child) and says where the time went, per
 * request: by area (Plinth's src/, node_modules, Node internals, GC, idle), top functions by self
 * time, src/ functions by inclusive time (a cheap wrapper calling something costly shows up),
 * and the difference against the bare server's profile under the same load.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { ROOT } from './children.ts'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  startTime: number
  endTime: number
}

export interface Profile {
  samples: number
  /** Wall-clock µs one sample stands for. */
  usPerSample: number
  idle: number
  areas: Map<string, number>
  self: Map<string, number>
  inclusiveSrc: Map<string, number>
}

const SRC = "Plinth's src/"

function where(url: string): string {
  if (url === '') return ''
  const file = url.startsWith('file://') ? new URL(url).pathname : url
  return file.startsWith(ROOT) ? path.relative(ROOT, file) : file.replace(/^.*node_modules\//, 'node_modules/')
}

function area(frame: ProfileNode['callFrame']): string {
  const { functionName, url } = frame
  if (functionName === '(idle)') return 'idle (waiting for I/O)'
  if (functionName === '(garbage collector)') return 'garbage collector'
  if (functionName === '(program)') return 'V8/native (program)'
  const file = where(url)
  if (file.startsWith('src/')) return SRC
  if (file.startsWith('bench/')) return 'bench/'
  if (file.includes('node_modules/')) return 'node_modules'
  return 'Node internals / native'
}

const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n)

export function readProfile(file: string): Profile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const hits = new Map<number, number>()
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1)
  const key = (n: ProfileNode) => {
    const f = n.callFrame
    return `${f.functionName || '(anonymous)'}  ${where(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`.trim()
  }
  const result: Profile = {
    samples: profile.samples.length,
    usPerSample: profile.samples.length ? (profile.endTime - profile.startTime) / profile.samples.length : 0,
    idle: 0,
    areas: new Map(),
    self: new Map(),
    inclusiveSrc: new Map(),
  }
  for (const [id, n] of hits) {
    const node = byId.get(id)!
    if (node.callFrame.functionName === '(idle)') result.idle += n
    add(result.areas, area(node.callFrame), n)
    add(result.self, key(node), n)
    const seen = new Set<string>() // each src/ function once per stack (recursion)
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)!
      if (area(frame.callFrame) !== SRC || seen.has(key(frame))) continue
      seen.add(key(frame))
      add(result.inclusiveSrc, key(frame), n)
    }
  }
  return result
}

const us = (p: Profile, samples: number, requests: number) => (samples * p.usPerSample) / requests
const fmtUs = (v: number) => `${v.toFixed(2).padStart(6)} µs`

/** Where one server's time went, per request served while profiled. */
export function describeProfile(p: Profile, requests: number, top = 15): string[] {
  const busy = p.samples - p.idle
  const lines = [
    `  ${Math.round(p.samples)} samples; on CPU ${((100 * busy) / p.samples).toFixed(0)}% of the time, ${fmtUs(us(p, busy, requests)).trim()} of main-thread CPU per request`,
    '  by area (µs per request, share of CPU):',
  ]
  const share = (n: number) => `${((100 * n) / busy).toFixed(1).padStart(5)}%`
  for (const [name, n] of [...p.areas].sort((a, b) => b[1] - a[1])) {
    if (name.startsWith('idle')) continue
    lines.push(`    ${fmtUs(us(p, n, requests))} ${share(n)}  ${name}`)
  }
  lines.push(`  top ${top} functions by self time:`)
  for (const [name, n] of [...p.self]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    lines.push(`    ${fmtUs(us(p, n, requests))} ${share(n)}  ${name}`)
  }
  lines.push("  Plinth's src/ functions by inclusive time (self + everything they call):")
  for (const [name, n] of [...p.inclusiveSrc].sort((a, b) => b[1] - a[1]).slice(0, 10)) {
    lines.push(`    ${fmtUs(us(p, n, requests))} ${share(n)}  ${name}`)
  }
  return lines
}

/** Functions costing Plinth more per request than the bare server, biggest difference first. */
export function diffProfiles(plinth: Profile, plinthRequests: number, bare: Profile, bareRequests: number, top = 15): string[] {
  const busyP = us(plinth, plinth.samples - plinth.idle, plinthRequests)
  const busyB = us(bare, bare.samples - bare.idle, bareRequests)
  const lines = [
    `  main-thread CPU per request: Plinth ${fmtUs(busyP).trim()}, bare ${fmtUs(busyB).trim()}: Plinth spends ${fmtUs(busyP - busyB).trim()} more per request (${((100 * (busyP - busyB)) / busyP).toFixed(0)}% of its time)`,
    `  where the extra goes (self time, µs per request: Plinth - bare = extra):`,
  ]
  const keys = new Set([...plinth.self.keys(), ...bare.self.keys()])
  const rows = [...keys]
    .filter((k) => !k.startsWith('(idle)'))
    .map((k) => {
      const a = us(plinth, plinth.self.get(k) ?? 0, plinthRequests)
      const b = us(bare, bare.self.get(k) ?? 0, bareRequests)
      return { k, a, b, d: a - b }
    })
    .sort((x, y) => y.d - x.d)
    .slice(0, top)
  for (const r of rows) lines.push(`    ${fmtUs(r.a)} - ${fmtUs(r.b)} = ${fmtUs(r.d)}  ${r.k}`)
  return lines
}

/**
 * Several profiles as one, the profiles of one kind of request. With `busyUs`, the main thread's
 * CPU time measured over them (lib/thread-cpu.ts), each busy sample stands for its share of that
 * time: on a loaded machine the sampling thread waits for a core too, so samples are not evenly
 * spaced and the wall time they span says little of the CPU used.
 */
export function mergeProfiles(profiles: readonly Profile[], busyUs?: number): Profile {
  const samples = profiles.reduce((sum, p) => sum + p.samples, 0)
  const spanUs = profiles.reduce((sum, p) => sum + p.samples * p.usPerSample, 0)
  const merged: Profile = { samples, usPerSample: samples === 0 ? 0 : spanUs / samples, idle: 0, areas: new Map(), self: new Map(), inclusiveSrc: new Map() }
  for (const p of profiles) {
    const weighed = (n: number) => (n * p.usPerSample) / merged.usPerSample
    merged.idle += weighed(p.idle)
    for (const field of ['areas', 'self', 'inclusiveSrc'] as const) for (const [key, n] of p[field]) add(merged[field], key, weighed(n))
  }
  if (busyUs !== undefined && merged.samples > merged.idle) {
    // Idle samples then stand for the same time as busy ones: shares of wall time are not told.
    merged.usPerSample = busyUs / (merged.samples - merged.idle)
  }
  return merged
}
