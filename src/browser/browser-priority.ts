/**
 * The browser runs below the server's CPU priority: on a machine with few cores, pages being
 * rendered must not hold back the requests the server answers meanwhile. On Linux, every thread
 * of every process the browser has started (its zygotes among them) is given a lower priority;
 * the renderers forked from those later inherit it. Elsewhere, and where the system refuses,
 * the browser keeps the server's priority.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'

/** Processes' parent ids, by process id, as /proc tells them now. */
function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // The command name may hold spaces and parentheses: the fields that follow it come after its last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parents.set(Number(entry), Number(fields[1]))
    } catch {
      // Gone meanwhile.
    }
  }
  return parents
}

/** Every descendant of `root` now, not `root` itself. */
function descendantsOf(root: number, parents: Map<number, number>): number[] {
  const found: number[] = []
  const wanted = new Set([root])
  let grew = true
  while (grew) {
    grew = false
    for (const [pid, parent] of parents) {
      if (wanted.has(parent) && !wanted.has(pid)) {
        wanted.add(pid)
        found.push(pid)
        grew = true
      }
    }
  }
  return found
}

/** Whether the process is a browser this process drives over a pipe, as playwright starts it. */
function isDrivenBrowser(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--remote-debugging-pipe')
  } catch {
    return false
  }
}

/** The nice value the browser's processes run at (0 is the server's; 19 the lowest). */
export const BROWSER_NICENESS = 10

/**
 * Gives every thread of the browsers this process started, and of every process they started,
 * the nice value `niceness`. Returns how many threads it lowered. Chromium sets the priority of a
 * renderer it starts (0 or 5, whatever its parent's), so this runs again for each page.
 */
export function lowerBrowserPriority(niceness = BROWSER_NICENESS): number {
  if (process.platform !== 'linux') return 0
  let parents: Map<number, number>
  try {
    parents = parentsByPid()
  } catch {
    return 0
  }
  const browsers = [...parents].filter(([pid, parent]) => parent === process.pid && isDrivenBrowser(pid)).map(([pid]) => pid)
  let lowered = 0
  for (const pid of browsers.flatMap((browser) => [browser, ...descendantsOf(browser, parents)])) {
    let threads: string[]
    try {
      threads = readdirSync(`/proc/${pid}/task`)
    } catch {
      continue
    }
    for (const thread of threads) {
      try {
        setPriority(Number(thread), niceness)
        lowered++
      } catch {
        // Gone meanwhile, or not ours to change.
      }
    }
  }
  return lowered
}
