import type { Subprocess } from 'bun'

/**
 * The README's shell examples as data: each ```console block between `<!-- run:start -->` and
 * `<!-- run:end -->` holds `$ command` lines (a trailing `\` continues one) each followed by
 * what it prints. `README.md` shows what a person sees, so the test runs the commands in one
 * shell, in order, and compares what they print with what the README says they print.
 */
export type Step = { command: string; expected: string[]; background: boolean }

export function walkthroughSteps(readme: string): Step[] {
  const steps: Step[] = []
  const regions = [...readme.matchAll(/<!-- run:start -->([\s\S]*?)<!-- run:end -->/g)].map((m) => m[1]!)
  for (const region of regions) {
    for (const block of region.matchAll(/```console\n([\s\S]*?)```/g)) {
      let current: Step | null = null
      let continuing = false
      for (const line of block[1]!.replace(/\n$/, '').split('\n')) {
        if (continuing && current) {
          current.command += `\n${line}`
          continuing = line.endsWith('\\')
        } else if (line.startsWith('$ ')) {
          current = { command: line.slice(2), expected: [], background: false }
          steps.push(current)
          continuing = line.endsWith('\\')
        } else if (current) current.expected.push(line)
        if (current && !continuing) current.background = /&\s*(#.*)?$/.test(current.command) && !/&&\s*(#.*)?$/.test(current.command)
      }
    }
  }
  // A block's blank last lines are layout, as the shell's are (run() drops those too).
  for (const step of steps) while (step.expected.length && step.expected[step.expected.length - 1] === '') step.expected.pop()
  return steps
}

// What changes from one run to the next: ids, times, durations, rates, sizes, process ids.
const VOLATILE: [RegExp, string][] = [
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>'],
  [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>'],
  [/\b\d+(\.\d+)?\s?(ms|s)\b/g, '<duration>'],
  [/\b\d+(\.\d+)? pages\/s/g, '<rate>'],
  [/\b\d+(\.\d+)? (B|KiB|MiB|GiB)\b/g, '<size>'],
  [/\/tmp\/[^\s"')]+/g, '<tmp>'],
]
export const normalize = (line: string) => VOLATILE.reduce((s, [re, to]) => s.replace(re, to), line.replace(/\s+$/, ''))

/**
 * Whether `actual` lines are what `expected` shows: line by line after normalizing, where an
 * expected line `...` stands for any number of lines and `…` inside a line for any text.
 */
export function matches(expected: string[], actual: string[]): boolean {
  const exp = expected.map(normalize)
  const act = actual.map(normalize)
  const lineMatches = (e: string, a: string) => (e.includes('…') ? new RegExp(`^${e.split('…').map(escape).join('.*')}$`).test(a) : e === a)
  const go = (i: number, j: number): boolean => {
    if (i === exp.length) return j === act.length
    if (exp[i] === '...') {
      for (let k = j; k <= act.length; k++) if (go(i + 1, k)) return true
      return false
    }
    return j < act.length && lineMatches(exp[i]!, act[j]!) && go(i + 1, j + 1)
  }
  return go(0, 0)
}
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** One bash, fed the commands in turn; a command's output is what it printed before its marker. */
export class Shell {
  private readonly proc: Subprocess<'pipe', 'pipe', 'inherit'>
  private buffer = ''
  private ended = false
  private n = 0

  constructor(cwd: string, env: Record<string, string>) {
    const proc = Bun.spawn(['bash', '--noprofile', '--norc'], { cwd, env, stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
    this.proc = proc
    // One reader for the shell's life: what it prints collects in the buffer that run() watches.
    void (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of proc.stdout) this.buffer += decoder.decode(chunk, { stream: true })
      this.ended = true
    })()
    // Job control: each background command gets its own process group, so close() ends npm and
    // the server it started together.
    this.proc.stdin.write('set -m\n')
  }

  /** Runs a command to its end (2>&1), or a background one until it has printed its first line. */
  async run(step: Step, timeoutMs: number): Promise<{ output: string[]; status: number }> {
    const id = ++this.n
    const marker = `__done_${id}__`
    if (step.background) {
      const log = `.bg-${id}.log`
      const command = step.command.replace(/&\s*(#.*)?$/, '')
      this.proc.stdin.write(
        `{ ${command.trim()} ; } > ${log} 2>&1 &\nfor i in $(seq 200); do [ -s ${log} ] && grep -q . ${log} && break; sleep 0.05; done; sleep 0.3; cat ${log}; echo; echo "${marker} 0"\n`,
      )
    } else {
      this.proc.stdin.write(`{ ${step.command} ; } 2>&1 < /dev/null; s=$?; echo; echo "${marker} $s"\n`)
    }
    this.proc.stdin.flush()
    const deadline = Date.now() + timeoutMs
    while (!this.buffer.includes(marker)) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`"${step.command}" did not finish in ${timeoutMs} ms; printed so far:\n${this.buffer}`)
      if (this.ended) throw new Error(`the shell ended during "${step.command}":\n${this.buffer}`)
      await Bun.sleep(20)
    }
    const at = this.buffer.indexOf(marker)
    const text = this.buffer.slice(0, at)
    const status = Number(/^__done_\d+__ (\d+)/.exec(this.buffer.slice(at))![1])
    this.buffer = this.buffer.slice(this.buffer.indexOf('\n', at) + 1)
    // The `echo` before the marker ends a last line printed without a newline; drop it after.
    const lines = text.replace(/\n$/, '').split('\n')
    while (lines.length && lines[lines.length - 1] === '') lines.pop()
    return { output: lines, status }
  }

  /** Ends the background jobs, then the shell. */
  async close() {
    this.proc.stdin.write('for p in $(jobs -p); do kill -TERM -- -$p 2>/dev/null; done; wait 2>/dev/null; exit 0\n')
    this.proc.stdin.flush()
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000)
    await this.proc.exited
    clearTimeout(timer)
  }
}
