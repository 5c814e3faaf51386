// A node:test reporter that writes only the failed tests: each failed test (not the suites that
// failed because of it) with its file, its suites and the first lines of its error. The test
// runner prints it after the whole report, so the end of a long run's output names what failed.
import path from 'node:path'

/** Lines of an error's stack kept. */
const STACK_LINES = 8

export default async function* failuresReporter(source) {
  /** Failures per file, in the order reported: a suite's failure comes after those of its tests. */
  const failures = []
  for await (const event of source) {
    if (event.type !== 'test:fail') continue
    const { name, nesting, file, details } = event.data
    const error = details?.error
    const failed = { file: file ? path.relative(process.cwd(), file) : '(no file)', name, nesting, error, suites: new Map() }
    // A suite that failed for its tests (or was cancelled with them) is their parent, not a
    // failure of its own: it is reported after them, and names each earlier failure of its file
    // below its level that has no parent there yet.
    if (details?.type === 'suite') {
      let adopted = 0
      for (const child of failures) {
        if (child.file === failed.file && child.nesting > nesting && !child.suites.has(nesting)) {
          child.suites.set(nesting, name)
          adopted++
        }
      }
      failed.suiteOnly = adopted > 0 && (error?.failureType === 'subtestsFailed' || error?.failureType === 'cancelledByParent')
    }
    failures.push(failed)
  }
  const leaves = failures.filter((failed) => !failed.suiteOnly)
  if (leaves.length === 0) return
  yield `\nFailed: ${leaves.length} test${leaves.length === 1 ? '' : 's'}\n`
  for (const failed of leaves) {
    yield `\n✖ ${failed.file}: ${[...[...failed.suites].sort(([a], [b]) => a - b).map(([, suite]) => suite), failed.name].join(' › ')}\n`
    for (const line of describe(failed.error)) yield `    ${line}\n`
  }
}

/** The error's kind, message and first stack lines (its cause's, when the runner wrapped it). */
function describe(error) {
  if (!error) return []
  const lines = []
  if (error.failureType && error.failureType !== 'testCodeFailure') lines.push(`(${error.failureType})`)
  const cause = error.cause ?? error
  const text = typeof cause === 'object' && cause !== null ? (cause.stack ?? String(cause.message ?? cause)) : String(cause)
  lines.push(...text.split('\n').slice(0, STACK_LINES))
  return lines
}
