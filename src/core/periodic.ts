/** A task run on a timer until stopped. */
export interface Periodic {
  stop(): void
}

/**
 * Runs `work` now (its failure is the caller's), then every `intervalMs` until stopped; a later
 * run's failure goes to `onError`. The timer never keeps the process alive, and a run still going
 * when the next is due is not started again beside it.
 */
export async function startPeriodic(work: () => Promise<unknown>, intervalMs: number, onError: (error: unknown) => void): Promise<Periodic> {
  await work()
  let running = false
  const timer = setInterval(() => {
    if (running) return
    running = true
    work()
      .catch(onError)
      .finally(() => (running = false))
  }, intervalMs).unref()
  return { stop: () => clearInterval(timer) }
}
