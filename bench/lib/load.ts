/**
 * Load runs with autocannon (in this process, while the servers run in children), interleaved:
 * after one warm-up per target, the measured time of every target is cut into slices run round
 * robin (A B C A B C ...), so a burst of load from elsewhere on the machine hits every target
 * alike instead of skewing one of them. Every response time is recorded (autocannon's own
 * histogram only has 1 ms resolution), and the CPU time each server process used is read from
 * /proc, giving requests per server CPU-second: a figure far less sensitive to a busy machine.
 */
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'

export interface LoadSettings {
  connections: number
  warmupSeconds: number
  durationSeconds: number
  /** Measured time of each target is cut into this many slices (1 = one continuous run). */
  slices: number
}

export interface Target {
  label: string
  url: string
  headers: Record<string, string>
  /** The server process, for its CPU time. */
  pid: number
}

export interface LoadResult {
  label: string
  rps: number
  p50: number
  p99: number
  maxMs: number
  requests: number
  seconds: number
  bytesPerResponse: number
  /** Share of one core the server used while measured (1 = one full core). */
  serverCores: number
  /** Requests served per CPU-second of the server process. */
  perCpuSecond: number
  /** Cores used by everything else on the machine (not this server, not autocannon). */
  otherCores: number
  errors: number
  timeouts: number
  non2xx: number
}

const TICK_MS = 10 // USER_HZ is 100 on Linux

/** CPU time (user + system, every thread) of a process, in ms. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

/** Busy CPU time of the whole machine, in ms (all cores). */
function machineBusyMs(): number {
  const [cpuLine = ''] = readFileSync('/proc/stat', 'utf8').split('\n')
  // cpu user nice system idle iowait irq softirq steal: idle and iowait are not busy; a field the kernel does not report is 0.
  const [, user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpuLine.trim().split(/\s+/).map(Number)
  return (user + nice + system + irq + softirq + steal) * TICK_MS
}

interface Acc {
  latencies: number[]
  requests: number
  bytes: number
  ms: number
  serverCpuMs: number
  otherCpuMs: number
  errors: number
  timeouts: number
  non2xx: number
}

async function slice(target: Target, seconds: number, connections: number, acc: Acc | null): Promise<void> {
  const server0 = processCpuMs(target.pid)
  const machine0 = machineBusyMs()
  const client0 = process.cpuUsage()
  const started = performance.now()
  const instance = autocannon({ url: target.url, headers: target.headers, connections, duration: seconds })
  if (acc) instance.on('response', (_client, _status, _bytes, ms) => acc.latencies.push(ms))
  const r = await instance
  if (!acc) return
  const wall = performance.now() - started
  const client = process.cpuUsage(client0)
  const server = processCpuMs(target.pid) - server0
  acc.requests += r.requests.total
  acc.bytes += r.throughput.total
  acc.ms += wall
  acc.serverCpuMs += server
  acc.otherCpuMs += Math.max(0, machineBusyMs() - machine0 - server - (client.user + client.system) / 1000)
  acc.errors += r.errors
  acc.timeouts += r.timeouts
  acc.non2xx += r.non2xx
}

/** One LoadResult per target, in the targets' order. */
type ResultsOf<T extends readonly Target[]> = { -readonly [K in keyof T]: LoadResult }

/** Warm-up, then the interleaved measured slices; prints one line per target and returns its result in the same place. */
export async function compare<const T extends readonly Target[]>(targets: T, s: LoadSettings): Promise<ResultsOf<T>> {
  const runs = targets.map((target) => {
    const acc: Acc = { latencies: [], requests: 0, bytes: 0, ms: 0, serverCpuMs: 0, otherCpuMs: 0, errors: 0, timeouts: 0, non2xx: 0 }
    return { target, acc }
  })
  if (s.warmupSeconds > 0) for (const t of targets) await slice(t, s.warmupSeconds, s.connections, null)
  const slices = Math.max(1, Math.floor(s.slices))
  const sliceSeconds = s.durationSeconds / slices
  for (let i = 0; i < slices; i++) for (const { target, acc } of runs) await slice(target, sliceSeconds, s.connections, acc)
  const results = runs.map(({ target, acc }) => {
    const result = summarize(target.label, acc)
    printResult(result)
    return result
  })
  // map keeps the length and order of targets.
  return results as ResultsOf<T>
}

function summarize(label: string, a: Acc): LoadResult {
  const sorted = Float64Array.from(a.latencies).sort()
  const seconds = a.ms / 1000
  return {
    label,
    rps: a.requests / seconds,
    p50: percentileSorted(sorted, 50),
    p99: percentileSorted(sorted, 99),
    maxMs: sorted.at(-1) ?? NaN,
    requests: a.requests,
    seconds,
    bytesPerResponse: a.requests ? a.bytes / a.requests : 0,
    serverCores: a.serverCpuMs / a.ms,
    perCpuSecond: a.serverCpuMs > 0 ? a.requests / (a.serverCpuMs / 1000) : NaN,
    otherCores: a.otherCpuMs / a.ms,
    errors: a.errors,
    timeouts: a.timeouts,
    non2xx: a.non2xx,
  }
}

export function printResult(r: LoadResult): void {
  console.log(
    `  ${r.label.padEnd(44)} ${fmtInt(r.rps).padStart(7)} req/s   p50 ${fmtMs(r.p50).padStart(7)}   p99 ${fmtMs(r.p99).padStart(7)}   ` +
      `server CPU ${(100 * r.serverCores).toFixed(0).padStart(3)}%  ${fmtInt(r.perCpuSecond).padStart(7)} req/CPU-s   ` +
      `${Math.round(r.bytesPerResponse)} B/resp   others ${(100 * r.otherCores).toFixed(0)}% CPU` +
      (r.errors || r.timeouts || r.non2xx ? `   !! ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx` : ''),
  )
}

export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US')
export const fmtMs = (ms: number): string => `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms`
export const fmtMiB = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

function percentileSorted(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.ceil((p / 100) * sorted.length) // nearest rank
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? NaN
}

/** Runs `run`, adds how long it took (ms) to `times`, and gives its result. */
export async function timed<T>(times: number[], run: () => Promise<T>): Promise<T> {
  const started = performance.now()
  const result = await run()
  times.push(performance.now() - started)
  return result
}

export function percentile(values: number[], p: number): number {
  return percentileSorted(Float64Array.from(values).sort(), p)
}
