import { hostname } from 'node:os'

/** Whether a process of this host with that pid is alive (EPERM: alive, someone else's). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'
  }
}

/**
 * A name for something this process holds in a shared data dir (a run lease, a blob store
 * opener): `host:pid:random`, so that another process of the host can tell from the pid
 * whether the holder still runs, and one process can hold several.
 */
export const processOwner = () => `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`

/** The pid in a processOwner name of this host (`host`); null for another host's name. */
export function pidOnThisHost(owner: string, host = hostname()): number | null {
  const [of, pid] = owner.split(':')
  return of === host ? Number(pid) : null
}
