import type { LogLevel } from './config'

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

/** A line logger to stderr: `time level message key=value …`. */
export type Logger = ReturnType<typeof createLogger>

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l + '\n')) {
  const min = ORDER[level]
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return
    const extra = fields
      ? Object.entries(fields)
          .map(([k, v]) => ` ${k}=${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v ?? null)}`)
          .join('')
      : ''
    write(`${new Date().toISOString()} ${lvl} ${msg}${extra}`)
  }
  return {
    /** Whether debug lines are written, so callers can skip building them (and hooks). */
    debugEnabled: min <= ORDER.debug,
    debug: (msg: string, fields?: Record<string, unknown>) => emit('debug', msg, fields),
    info: (msg: string, fields?: Record<string, unknown>) => emit('info', msg, fields),
    warn: (msg: string, fields?: Record<string, unknown>) => emit('warn', msg, fields),
    error: (msg: string, fields?: Record<string, unknown>) => emit('error', msg, fields),
  }
}
