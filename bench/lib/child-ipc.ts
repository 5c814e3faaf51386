/**
 * The IPC side of a benchmark child (see children.ts for the parent side): answers `{id, type}`
 * requests with `{id, ...}`, with the CPU profiler built in, and exits cleanly on SIGTERM or when
 * the parent goes away (so --cpu-prof files, if any, are written and no child is orphaned).
 *   profile-start {intervalUs}  -> starts the V8 CPU profiler (node:inspector)
 *   profile-stop  {file}        -> stops it and writes the .cpuprofile there
 */
import { writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'

type Handler = (msg: Record<string, any>) => Promise<Record<string, unknown>> | Record<string, unknown>

let session: Session | null = null

const builtin: Record<string, Handler> = {
  async 'profile-start'(msg) {
    session = new Session()
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: msg.intervalUs ?? 200 })
    await session.post('Profiler.start')
    return {}
  },
  async 'profile-stop'(msg) {
    if (!session) throw new Error('no profile running')
    const { profile } = await session.post('Profiler.stop')
    session.disconnect()
    session = null
    if (!msg.file) throw new Error('profile-stop needs a file')
    await writeFile(msg.file, JSON.stringify(profile))
    return { file: msg.file }
  },
}

export function serveIpc(handlers: Record<string, Handler>, close: () => Promise<void>): void {
  const all = { ...builtin, ...handlers }
  process.on('message', (msg: any) => {
    const handler = all[msg?.type]
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown request ${msg?.type}`)
        return handler(msg)
      })
      .then(
        (reply) => process.send?.({ id: msg.id, ...reply }),
        (error) => process.send?.({ id: msg.id, error: (error as Error).message }),
      )
  })

  let closing = false
  const shutdown = (): void => {
    if (closing) return
    closing = true
    setTimeout(() => process.exit(1), 5_000).unref()
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  process.on('disconnect', shutdown)
}
