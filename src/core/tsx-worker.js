// Where every worker thread of a WorkerPool (worker-pool.ts) starts. Plain JavaScript, because a
// thread starts from a file Node loads itself: it registers tsx's ESM loader in this thread, as
// bin/plinth.js does for the CLI, then loads the pool's TypeScript module (workerData.module).
// Each task reports on its own port that a thread took it up, which starts the task's clock,
// then runs the module's default export with the rest of the message.
import { workerData } from 'piscina'
import { register } from 'tsx/esm/api'

register()
const { default: handle } = await import(workerData.module)

export default function task({ started, ...message }) {
  started.postMessage(0)
  started.close()
  return handle(message)
}
