import { readdirSync, readFileSync } from 'node:fs'

// What the benches read from /proc (Linux).

const CLK_TCK = 100 // /proc/<pid>/stat ticks per second on Linux

/**
 * CPU seconds (user + system) a process and its threads have used so far, plus those of the
 * children it has waited for; null when /proc cannot tell (another OS, a process gone).
 */
export function procCpu(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the parenthesised command name: utime, stime, cutime, cstime are the 12th to 15th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK
  } catch {
    return null
  }
}

/**
 * CPU seconds used so far by every process on the machine, summed by the group `classify` puts
 * each in (from its pid, command name and command line; null leaves it out). A process's reaped
 * children count with it, so a backend that exits mid-measure still counts with its parent.
 */
export function cpuByGroup(classify: (pid: number, comm: string, cmdline: string) => string | null): Record<string, number> {
  const out: Record<string, number> = {}
  for (const name of readdirSync('/proc')) {
    const pid = Number(name)
    if (!Number.isInteger(pid)) continue
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
      const group = classify(pid, comm, cmdline)
      const cpu = group === null ? null : procCpu(pid)
      if (group !== null && cpu !== null) out[group] = (out[group] ?? 0) + cpu
    } catch {
      // gone between the listing and the read
    }
  }
  return out
}
