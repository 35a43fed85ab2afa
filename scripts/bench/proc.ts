import { readFileSync } from 'node:fs'

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
