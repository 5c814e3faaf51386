/**
 * Submissions as CSV (RFC 4180: comma-separated, CRLF lines, fields quoted when they hold a quote,
 * a comma or a line break). A value a spreadsheet would run as a formula (one starting with `=`,
 * `+`, `-`, `@`, a tab or a carriage return) is written with a leading `'`, so opening the export
 * never runs what a visitor typed.
 */
import type { FormSubmission } from './forms.schemas.ts'

const FORMULA_START = /^[=+\-@\t\r]/

/** One CSV field: neutralised, then quoted when it must be. */
export function csvField(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/** The export: id, date, spam, the declared fields in order, then any other field sent, then the files. */
export function submissionsCsv(declared: readonly string[], submissions: readonly FormSubmission[]): string {
  const columns = [...declared]
  for (const submission of submissions) for (const name of Object.keys(submission.data)) if (!columns.includes(name)) columns.push(name)
  const header = ['id', 'createdAt', 'spam', ...columns, 'files']
  const lines = submissions.map((submission) => [
    submission.id,
    submission.createdAt,
    submission.spam ? 'yes' : 'no',
    ...columns.map((name) => (Object.hasOwn(submission.data, name) ? submission.data[name]! : '')),
    submission.files.map((file) => `${file.filename} (${file.url})`).join(' '),
  ])
  return [header, ...lines].map((line) => line.map(csvField).join(',')).join('\r\n') + '\r\n'
}
