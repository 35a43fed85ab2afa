/**
 * `promtool check metrics`, Prometheus's own reader and linter of the text format: the exposition
 * on its stdin, a non-zero exit with the problems it found. Without promtool the tests fail and
 * say what to install (never skip): Debian's `prometheus` package ships it.
 */
export async function promtoolCheck(text: string): Promise<{ code: number; output: string }> {
  const promtool = Bun.which('promtool')
  if (!promtool) throw new Error("promtool is not installed: install Debian's prometheus package (apt-get install prometheus), which ships it")
  const proc = Bun.spawn([promtool, 'check', 'metrics'], { stdin: new TextEncoder().encode(text), stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, output: `${out}${err}`.trim() }
}

/** One sample line of an exposition, parsed: its name, labels and value. */
export type Sample = { name: string; labels: Record<string, string>; value: number }

/** The samples of an exposition (comments skipped); label values unescaped. */
export function samples(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    out.push({ name: m[1]!, labels, value: m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]) })
  }
  return out
}

/** The value of the one sample of `name` whose labels include `labels`; the sum when several match; 0 when none. */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)
}
