/**
 * Rows a statement inserts or upserts by key, in one order for every writer: two transactions
 * writing the same keys then take their rows' locks in the same order, and never wait for each
 * other in a circle (PostgreSQL answers that with "deadlock detected", failing one of them).
 */
export function inLockOrder<T>(rows: readonly T[], key: (row: T) => string): T[] {
  return rows
    .map((row) => ({ row, key: key(row) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ row }) => row)
}
