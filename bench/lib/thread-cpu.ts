/**
 * The CPU time a process's threads have used, read from outside it in
 * `/proc/<pid>/task/<tid>/schedstat` (nanoseconds on CPU, per thread): precise enough to give one
 * request's cost, which `/proc/<pid>/stat` (10 ms ticks) is not, and read without asking the
 * process anything, so the measurement adds no work to what it measures. The main thread (the
 * event loop) is given apart, as the one every request waits on. A thread that ends takes its
 * time with it: the content-scan threads are kept for minutes without work, so between two
 * readings a few milliseconds apart they stay.
 */
import { readdirSync, readFileSync } from 'node:fs'

export interface ThreadCpu {
  /** ms on CPU of the main thread. */
  main: number
  /** ms on CPU of every thread alive now (the main thread, libuv's pool, V8's helpers, worker threads). */
  all: number
}

export function threadCpu(pid: number): ThreadCpu {
  let main = 0
  let all = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8')
    } catch {
      continue // the thread ended meanwhile
    }
    const ms = Number(stat.split(' ')[0]) / 1e6
    all += ms
    if (tid === String(pid)) main = ms
  }
  return { main, all }
}

/** The CPU used between two readings. */
export const cpuSince = (before: ThreadCpu, after: ThreadCpu): ThreadCpu => ({ main: after.main - before.main, all: after.all - before.all })
