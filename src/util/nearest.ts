/**
 * The candidate a mistyped word most likely meant, or null when none is close: for "did you
 * mean" in the command line's errors. Close is at most one edit for a word of up to five
 * characters and two for a longer one (a swap of neighbours is one edit), or, failing that, a
 * word of three or more characters that begins exactly one candidate (`--same` for
 * `--same-domain`). Case is ignored; leading dashes are not counted.
 */
export function nearest(word: string, candidates: readonly string[]): string | null {
  const bare = (s: string) => s.replace(/^-+/, '').toLowerCase()
  const w = bare(word)
  // Every letter is one edit from every other: a one-letter flag (-x) has no nearest.
  if (w.length < 2) return null
  const limit = w.length <= 5 ? 1 : 2
  let best: string | null = null
  let bestDistance = Infinity
  for (const c of candidates) {
    const d = distance(w, bare(c))
    if (d <= limit && d < bestDistance) [best, bestDistance] = [c, d]
  }
  if (best !== null) return best
  const starts = w.length >= 3 ? candidates.filter((c) => bare(c).startsWith(w)) : []
  return starts.length === 1 ? starts[0]! : null
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function distance(a: string, b: string): number {
  // Rows i-2, i-1 and i of the usual table; the strings are a few dozen characters at most.
  let before = new Array<number>(b.length + 1).fill(0)
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1)
      row.push(d)
    }
    ;[before, previous] = [previous, row]
  }
  return previous[b.length]!
}
