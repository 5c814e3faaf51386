/**
 * 6. Start-up: the compiled server (`node dist/main.js`, what `npm start` runs once dist/ is
 * current) from its spawn to its first answer to GET /v1, beside a bare node:http server started
 * and asked the same way in the same run; its resident memory (VmRSS) idle after the start; and
 * `plinth user create` (bin/plinth.js, what `npx plinth` runs) from its spawn to its exit. Each is
 * the median of RUNS cold processes on one data dir, migrated by a start before them. Beside the
 * times, the CPU each server used up to its first answer (/proc/<pid>/stat): on a busy machine
 * the times grow with everything else running, the CPU far less. `npm start` (npm, the build
 * check, then the server) is timed the same way, for information.
 */
import { execFile, execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { makeTempDir, ROOT, rssOf } from './lib/children.ts'
import { fmtMiB, percentile } from './lib/load.ts'
import { plinthEnv } from './lib/settings.ts'

export const START_TARGET_MS = 1500
export const IDLE_RSS_TARGET_BYTES = 150 * 1024 * 1024
export const USER_CREATE_TARGET_MS = 1500

/** Cold processes per figure. */
const RUNS = 5
/** How long a started server is left alone before its memory is read. */
const IDLE_MS = 2000

export interface StartupResult {
  runs: number
  /** Median ms from spawn to the first GET /v1 answer. */
  startMs: number
  bareStartMs: number
  npmStartMs: number
  /** Median CPU ms (user + system) the server used up to its first answer: what a start costs, whatever else the machine runs. */
  startCpuMs: number
  bareStartCpuMs: number
  /** Median VmRSS in bytes, IDLE_MS after the first answer. */
  idleRss: number
  userCreateMs: number
}

const BARE_SERVER = `
  const http = require('node:http')
  const server = http.createServer((req, res) => res.end('{"name":"bare"}'))
  server.listen(0, '127.0.0.1', () => console.log('serving on http://127.0.0.1:' + server.address().port))
  process.on('SIGTERM', () => server.close(() => process.exit(0)))`

const SERVING = /(?:Plinth is )?serving on (http:\/\/127\.0\.0\.1:\d+)/

/** CPU ms (user + system) a process has used, from /proc/<pid>/stat. */
function cpuMsOf(pid: number): number {
  // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th, in clock ticks (100 a second).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

interface Started {
  ms: number
  cpuMs: number
}

/** Spawns a server, waits for the line naming its address, asks GET /v1 once; ms from spawn to that answer, and the CPU the server used by then. */
async function timeToFirstAnswer(command: string, args: string[], env: Record<string, string>, idle?: (pid: number) => void): Promise<Started> {
  const started = performance.now()
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  try {
    let output = ''
    const address = await new Promise<string>((resolve, reject) => {
      const look = (chunk: Buffer) => {
        output += chunk.toString('utf8')
        const match = SERVING.exec(output)
        if (match) resolve(match[1]!)
      }
      child.stdout.on('data', look)
      child.stderr.on('data', look)
      child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code} before serving:\n${output}`)))
    })
    const answer = await fetch(`${address}/v1`)
    await answer.arrayBuffer()
    const ms = performance.now() - started
    const cpuMs = cpuMsOf(child.pid!)
    if (answer.status !== 200) throw new Error(`GET /v1 answered ${answer.status}`)
    if (idle) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
      // The server's own process: under npm the pid is npm's, so memory is read for direct starts only.
      idle(child.pid!)
    }
    return { ms, cpuMs }
  } finally {
    child.kill('SIGTERM')
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(force)
  }
}

const median = (values: number[]) => percentile(values, 50)

export async function startupPhase(): Promise<StartupResult> {
  console.log(`\n== 6. Start-up of the compiled server and the admin command (median of ${RUNS} cold processes) ==`)
  // Built first (when out of date), so no timed start builds.
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.js')], { cwd: ROOT, stdio: 'inherit' })
  const dataDir = await makeTempDir('startup')
  // Info level: the start-up line names the address. Port 0: each start takes a free port.
  const env = plinthEnv(dataDir, { PLINTH_LOG_LEVEL: 'info' })
  await timeToFirstAnswer(process.execPath, ['dist/main.js'], env) // migrates the data dir

  const starts: number[] = []
  const startCpu: number[] = []
  const bare: number[] = []
  const bareCpu: number[] = []
  const npmStarts: number[] = []
  const rss: number[] = []
  const userCreates: number[] = []
  for (let i = 0; i < RUNS; i++) {
    // Interleaved, so a busy spell of the machine weighs on each alike.
    const baseline = await timeToFirstAnswer(process.execPath, ['-e', BARE_SERVER], {})
    bare.push(baseline.ms)
    bareCpu.push(baseline.cpuMs)
    const server = await timeToFirstAnswer(process.execPath, ['dist/main.js'], env, (pid) => rss.push(rssOf(pid)))
    starts.push(server.ms)
    startCpu.push(server.cpuMs)
    npmStarts.push((await timeToFirstAnswer('npm', ['start', '--silent'], env)).ms)
    const started = performance.now()
    const args = ['user', 'create', '--email', `startup-${i}@example.com`, '--password', 'a long passphrase']
    await promisify(execFile)(process.execPath, [path.join(ROOT, 'bin/plinth.js'), ...args], { cwd: ROOT, env: { ...process.env, ...env } })
    userCreates.push(performance.now() - started)
    console.log(
      `  run ${i + 1}: server ${starts.at(-1)!.toFixed(0)} ms, ${startCpu.at(-1)!.toFixed(0)} ms CPU (bare ${bare.at(-1)!.toFixed(0)} ms, ${bareCpu.at(-1)!.toFixed(0)} ms CPU; ` +
        `npm start ${npmStarts.at(-1)!.toFixed(0)} ms), ` +
        `idle RSS ${fmtMiB(rss.at(-1)!)}, user create ${userCreates.at(-1)!.toFixed(0)} ms`,
    )
  }
  return {
    runs: RUNS,
    startMs: median(starts),
    bareStartMs: median(bare),
    startCpuMs: median(startCpu),
    bareStartCpuMs: median(bareCpu),
    npmStartMs: median(npmStarts),
    idleRss: median(rss),
    userCreateMs: median(userCreates),
  }
}
