import type { Registry } from './registry'

/**
 * The standard process metrics every Prometheus client exposes, under their standard names, read
 * at each scrape: CPU time, resident memory, and when the process started.
 */
export function processMetrics(registry: Registry): void {
  const cpu = registry.counter('process_cpu_seconds_total', 'User and system CPU time spent by this process, in seconds.')
  const rss = registry.gauge('process_resident_memory_bytes', 'Resident memory size of this process, in bytes.')
  const start = registry.gauge('process_start_time_seconds', 'When this process started, in seconds since the Unix epoch.')
  // The process's own clock origin: its start, not this module's load.
  start.set(Math.round(performance.timeOrigin) / 1000)
  registry.collect(() => {
    const used = process.cpuUsage()
    cpu.labels().value = (used.user + used.system) / 1e6
    rss.set(process.memoryUsage.rss())
  })
}
