/** Counts by name as a run shows them (its error counts): most frequent first, then by name; zeros left out. */
export function sortedCounts(counts: Iterable<[string, number]>): Record<string, number> {
  return Object.fromEntries([...counts].filter(([, n]) => n > 0).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0)))
}
