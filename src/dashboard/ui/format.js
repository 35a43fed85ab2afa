// How values read on the page.
import { html } from './html.js'

export const when = (iso) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) + 'Z' : '—')
export const short = (id) => (id ? id.slice(0, 8) : '—')

export function bytes(n) {
  if (n === null || n === undefined) return '—'
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let i = 0
  while (n >= 1024 && i < units.length - 1) ((n /= 1024), i++)
  return `${i ? n.toFixed(1) : n} ${units[i]}`
}

export function duration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—'
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`
}

/** A status or outcome as a coloured pill. */
export const pill = (value) => html`<span class="pill pill-${value || 'none'}">${value || '—'}</span>`

/** An error message of a failed load or action. */
export const problem = (error) => error && html`<p class="problem" role="alert">${error.message}</p>`
