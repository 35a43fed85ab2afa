// Charts drawn by hand as inline SVG: stacked bars (counts per bucket) and lines (latency
// percentiles per bucket). Sized by a viewBox, so they fill their box at any width.
import { html } from './html.js'

const W = 600
const H = 200
const PAD = { l: 44, r: 8, t: 8, b: 28 }
const COLOURS = ['#2f6fdf', '#d9822b', '#2e9e5b', '#c23b3b', '#8a5cc2', '#6b7785', '#b8a12c']
export const colour = (i) => COLOURS[i % COLOURS.length]
/** Log statuses in the colours their pills have. */
const NAMED = { ok: '#2e9e5b', error: '#c23b3b', skipped: '#d9822b', retried: '#8a5cc2' }
const colourOf = (key, i) => NAMED[key] ?? colour(i)

/** A readable maximum for the axis: 1, 2 or 5 times a power of ten. */
function niceMax(v) {
  if (v <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(v))
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= v)
}

const timeLabel = (iso) => new Date(iso).toISOString().slice(11, 16)

function Axes({ max, labels, unit }) {
  const ticks = [0, max / 2, max]
  const x = (i) => PAD.l + ((i + 0.5) * (W - PAD.l - PAD.r)) / Math.max(1, labels.length)
  const every = Math.ceil(labels.length / 8)
  return html`<g class="axes">
    ${ticks.map((t) => {
      const y = H - PAD.b - (t / max) * (H - PAD.t - PAD.b)
      return html`<line x1=${PAD.l} x2=${W - PAD.r} y1=${y} y2=${y} class="grid-line" /><text x=${PAD.l - 4} y=${y + 4} text-anchor="end">${+t.toPrecision(3)}${unit}</text>`
    })}
    ${labels.map((l, i) => i % every === 0 && html`<text x=${x(i)} y=${H - 8} text-anchor="middle">${timeLabel(l)}</text>`)}
  </g>`
}

function Legend({ keys }) {
  return html`<div class="legend">${keys.map((k, i) => html`<span><i style=${{ background: colourOf(k, i) }}></i>${k}</span>`)}</div>`
}

/** `buckets`: [{start, values: {key: n}}], oldest first; one stacked bar each. */
export function StackedBars({ title, buckets, keys }) {
  const max = niceMax(Math.max(0, ...buckets.map((b) => keys.reduce((s, k) => s + (b.values[k] || 0), 0))))
  const slot = (W - PAD.l - PAD.r) / Math.max(1, buckets.length)
  const scale = (v) => (v / max) * (H - PAD.t - PAD.b)
  return html`<figure class="chart" data-chart=${title}>
    <figcaption>${title}</figcaption>
    ${
      buckets.length === 0
        ? html`<p class="empty">Nothing recorded yet.</p>`
        : html`<svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${title}>
            <${Axes} max=${max} labels=${buckets.map((b) => b.start)} unit="" />
            ${buckets.map((b, i) => {
              let y = H - PAD.b
              return keys.map((k, j) => {
                const h = scale(b.values[k] || 0)
                y -= h
                return h > 0 && html`<rect x=${PAD.l + i * slot + slot * 0.15} width=${slot * 0.7} y=${y} height=${h} fill=${colourOf(k, j)}><title>${k}: ${b.values[k]}</title></rect>`
              })
            })}
          </svg>`
    }
    <${Legend} keys=${keys} />
  </figure>`
}

/** `buckets`: [{start, values: {key: n}}]; one line (and dots) per key. */
export function Lines({ title, buckets, keys, unit = '' }) {
  const max = niceMax(Math.max(0, ...buckets.flatMap((b) => keys.map((k) => b.values[k] || 0))))
  const slot = (W - PAD.l - PAD.r) / Math.max(1, buckets.length)
  const at = (i, v) => [PAD.l + (i + 0.5) * slot, H - PAD.b - (v / max) * (H - PAD.t - PAD.b)]
  return html`<figure class="chart" data-chart=${title}>
    <figcaption>${title}</figcaption>
    ${
      buckets.length === 0
        ? html`<p class="empty">Nothing recorded yet.</p>`
        : html`<svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${title}>
            <${Axes} max=${max} labels=${buckets.map((b) => b.start)} unit=${unit} />
            ${keys.map((k, j) => {
              const pts = buckets.map((b, i) => at(i, b.values[k] || 0))
              return html`<g>
                <polyline points=${pts.map((p) => p.join(',')).join(' ')} fill="none" stroke=${colour(j)} stroke-width="2" />
                ${pts.map((p, i) => html`<circle cx=${p[0]} cy=${p[1]} r="3" fill=${colour(j)}><title>${k}: ${buckets[i].values[k]}${unit}</title></circle>`)}
              </g>`
            })}
          </svg>`
    }
    <${Legend} keys=${keys} />
  </figure>`
}
