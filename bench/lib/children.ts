/**
 * Child processes and temp dirs of the benchmark, and their cleanup. Servers run in children so
 * the load generator (autocannon, in this process) does not steal their CPU. Each child prints
 * one JSON line `{"ready":true,...}` on stdout when it listens, and answers IPC requests
 * `{id,type}` with `{id,...}`.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface ReadyInfo {
  ready: true
  address: string
  pid: number
  [key: string]: unknown
}

export interface Child {
  name: string
  pid: number
  info: ReadyInfo
  port: number
  /** IPC request to the child; rejects after timeoutMs. */
  ask<T = any>(type: string, extra?: Record<string, unknown>, timeoutMs?: number): Promise<T>
  /** SIGTERM, then SIGKILL after 10 s. Resolves when the child has exited. */
  stop(): Promise<void>
}

const live = new Map<ChildProcess, string>()
const tempDirs = new Set<string>()

export async function makeTempDir(tag: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `plinth-bench-${tag}-`))
  tempDirs.add(dir)
  return dir
}

export async function spawnChild(name: string, script: string, env: Record<string, string>, nodeArgs: string[] = [], readyTimeoutMs = 60_000): Promise<Child> {
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, 'bench', script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  live.set(proc, name)
  proc.once('exit', () => live.delete(proc))
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))

  const info = await new Promise<ReadyInfo>((resolve, reject) => {
    let buffered = ''
    const timer = setTimeout(() => reject(new Error(`${name}: not ready after ${readyTimeoutMs} ms`)), readyTimeoutMs)
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer)
      reject(new Error(`${name}: exited before it was ready (code ${code}, signal ${signal})`))
    }
    proc.once('exit', onExit)
    proc.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8')
      let nl: number
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl).trim()
        buffered = buffered.slice(nl + 1)
        if (!line) continue
        let parsed: any
        try {
          parsed = JSON.parse(line)
        } catch {
          process.stdout.write(`[${name}] ${line}\n`)
          continue
        }
        if (parsed?.ready === true) {
          clearTimeout(timer)
          proc.off('exit', onExit)
          resolve(parsed as ReadyInfo)
        }
      }
    })
  })

  let nextId = 1
  const pending = new Map<number, (msg: any) => void>()
  proc.on('message', (msg: any) => {
    const done = pending.get(msg?.id)
    if (done) {
      pending.delete(msg.id)
      done(msg)
    }
  })

  return {
    name,
    pid: proc.pid!,
    info,
    port: Number(new URL(info.address).port),
    ask(type, extra = {}, timeoutMs = 30_000) {
      const id = nextId++
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id)
          reject(new Error(`${name}: no answer to "${type}" within ${timeoutMs} ms`))
        }, timeoutMs)
        pending.set(id, (msg) => {
          clearTimeout(timer)
          if (msg.error) reject(new Error(`${name}: ${type}: ${msg.error}`))
          else resolve(msg)
        })
        proc.send({ id, type, ...extra })
      })
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Resident set size of a process in bytes, from /proc/<pid>/status (VmRSS). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return Number(match[1]) * 1024
}

/** Stops every child still running (SIGTERM, SIGKILL after 5 s) and removes every temp dir. */
export async function cleanupAll(): Promise<void> {
  await Promise.all(
    [...live.keys()].map(
      (proc) =>
        new Promise<void>((resolve) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return resolve()
          const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000)
          proc.once('exit', () => {
            clearTimeout(timer)
            resolve()
          })
          proc.kill('SIGTERM')
        }),
    ),
  )
  for (const dir of tempDirs) {
    await rm(dir, { recursive: true, force: true }).catch(() => {})
    tempDirs.delete(dir)
  }
}

/** Synchronous last resort on a hard exit: kill children (temp dirs may be left). */
export function killAllSync(): void {
  for (const proc of live.keys()) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
}
