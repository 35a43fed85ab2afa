// A run's link graph as a list to browse: a page, the pages that link to it (parents) and the
// links on it (children), from /edges filtered by the page's hash; a click moves to that page.
import { html, useState } from './html.js'
import { get, qs, useLoad, usePaged } from './api.js'
import { problem } from './format.js'

function Node({ run, link, onOpen }) {
  const edges = usePaged(`/v1/runs/${run.id}/edges${qs({ url_hashes: link.hash, per_page: 100 })}`, [])
  const parents = edges.rows.filter((e) => e.child.hash === link.hash).map((e) => e.parent)
  const children = edges.rows.filter((e) => e.parent.hash === link.hash).map((e) => e.child)
  const list = (title, links, name) =>
    html`<div class="edges" data-edges=${name}>
      <h4>${title} (${links.length}${edges.next ? '+' : ''})</h4>
      <ul>
        ${links.map((l) => html`<li><button class="link url" onClick=${() => onOpen(l)}>${l.url}</button></li>`)}
      </ul>
    </div>`
  return html`<div class="node card">
    <h3 class="url">${link.url}</h3>
    ${problem(edges.error)}
    <div class="split even">${list('Linked from', parents, 'parents')} ${list('Links to', children, 'children')}</div>
    ${edges.next && html`<button onClick=${edges.more}>More edges</button>`}
  </div>`
}

export function RunGraph({ run }) {
  const seeds = useLoad(() => get(`/v1/runs/${run.id}/links${qs({ depth: 0, per_page: 100 })}`), [run.id])
  const [trail, setTrail] = useState([])
  const current = trail[trail.length - 1]
  return html`<div class="run-graph">
    ${problem(seeds.error)}
    <p class="trail">
      <button class="link" onClick=${() => setTrail([])}>seeds</button>
      ${trail.map((l, i) => html` › <button class="link url" onClick=${() => setTrail(trail.slice(0, i + 1))}>${new URL(l.url).pathname}</button>`)}
    </p>
    ${
      current
        ? html`<${Node} key=${current.hash} run=${run} link=${current} onOpen=${(l) => setTrail([...trail, l])} />`
        : html`<ul class="pages">
            ${(seeds.data?.data || []).map((l) => html`<li><button class="link url" onClick=${() => setTrail([l])}>${l.url}</button></li>`)}
          </ul>`
    }
  </div>`
}
