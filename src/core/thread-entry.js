// Where every worker thread of a WorkerPool (worker-pool.ts) starts. Plain JavaScript, because a
// thread starts from a file Node loads itself. Run from the TypeScript sources (tests,
// development), the pool says so (workerData.typescript) and this thread registers tsx's loader
// before it loads the pool's module; compiled (dist/), the module is JavaScript and no loader is
// registered. Each task reports on its own port that a thread took it up, which starts the task's
// clock, then runs the module's default export with the rest of the message.
import { workerData } from 'piscina'

if (workerData.typescript) {
  const { register } = await import('tsx/esm/api')
  register()
}
const { default: handle } = await import(workerData.module)

export default function task({ started, ...message }) {
  started.postMessage(0)
  started.close()
  return handle(message)
}
