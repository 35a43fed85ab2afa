// Pattern sets: the list, a create form, and paths typed against a set with its matches shown
// as they are typed (POST /v1/patterns/{id}/match).
import { html, useEffect, useState } from './html.js'
import { get, hostOf, post, useLoad } from './api.js'
import { Field, OtherErrors, lines, useSubmit } from './form.js'
import { problem } from './format.js'
import { Table } from './table.js'

const CATEGORIES = ['articles', 'blogs', 'products', 'forums', 'sections', 'others']

function Matcher({ set }) {
  const [paths, setPaths] = useState('/')
  const [answer, setAnswer] = useState({ results: [], error: null })
  useEffect(() => {
    let live = true
    const list = lines(paths)
    const timer = setTimeout(async () => {
      if (!list.length) return setAnswer({ results: [], error: null })
      try {
        const r = await post(`/v1/patterns/${set.id}/match`, { paths: list })
        if (live) setAnswer({ results: r.results, error: null })
      } catch (error) {
        if (live) setAnswer({ results: [], error })
      }
    }, 200)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [set.id, paths])
  return html`<div class="matcher card">
    <h3>${set.category} on ${set.host.domain}</h3>
    <p class="code">${set.patterns.format}: ${set.patterns.patterns.join('  ')}</p>
    <label class="field"><span class="label">Paths (one a line)</span><textarea name="paths" rows="4" value=${paths} onInput=${(e) => setPaths(e.target.value)} /></label>
    ${problem(answer.error)}
    <${Table}
      name="matches"
      rows=${answer.results}
      attrs=${(r) => ({ class: r.matched ? 'matched' : '', 'data-path': r.path })}
      columns=${[
        ['URL', (r) => r.url, 'url'],
        ['Matched', (r) => (r.matched ? 'yes' : 'no')],
        ['Patterns', (r) => (r.patterns || []).join(' '), 'code'],
      ]}
    />
  </div>`
}

function PatternForm({ onCreated }) {
  const [f, setF] = useState({ domain: '', category: 'articles', format: 'url_pattern', patterns: '' })
  const { errors, failure, send } = useSubmit()
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value })
  const submit = (e) => {
    e.preventDefault()
    void send(async () => {
      const host = await hostOf(f.domain)
      return post(`/v1/hosts/${host.hash}/patterns`, { category: f.category, patterns: { format: f.format, patterns: lines(f.patterns) } })
    }, onCreated)
  }
  return html`<form class="card" onSubmit=${submit} novalidate>
    <h3>New pattern set</h3>
    <div class="grid">
      <${Field} label="Host" path="hosts" errors=${errors}><input name="domain" value=${f.domain} onInput=${set('domain')} placeholder="shop.example" /><//>
      <${Field} label="Category" path="category" errors=${errors}
        ><select name="category" value=${f.category} onChange=${set('category')}>
          ${CATEGORIES.map((c) => html`<option>${c}</option>`)}
        </select><//
      >
      <${Field} label="Format" path="patterns.format" errors=${errors}>
        <select name="format" value=${f.format} onChange=${set('format')}>
          <option value="url_pattern">URLPattern</option>
          <option value="regex">RE2 regex</option>
        </select>
      <//>
    </div>
    <${Field} label="Patterns (one a line)" path="patterns.patterns" errors=${errors}>
      <textarea name="patterns" class="code" rows="3" value=${f.patterns} onInput=${set('patterns')} placeholder="/p/:id" />
    <//>
    <${OtherErrors} errors=${errors} shown=${['hosts', 'category', 'patterns.format', 'patterns.patterns']} />
    ${problem(failure)}
    <button type="submit">Create</button>
  </form>`
}

export function Patterns() {
  const sets = useLoad(() => get('/v1/patterns?per_page=100'), [])
  const [open, setOpen] = useState(null)
  return html`<section>
    <div class="bar"><h2>Pattern sets</h2></div>
    ${problem(sets.error)}
    <div class="split">
      <ul class="pages">
        ${(sets.data?.data || []).map(
          (s) =>
            html`<li class=${open?.id === s.id ? 'selected' : ''}>
              <button class="link" onClick=${() => setOpen(s)}>${s.host.domain}: ${s.category}</button>
              <small class="code">${s.patterns.patterns.join(' ')}</small>
            </li>`,
        )}
        ${sets.data && !sets.data.data.length && html`<li class="empty">No pattern sets.</li>`}
      </ul>
      ${open && html`<${Matcher} key=${open.id} set=${open} />`}
    </div>
    <${PatternForm}
      onCreated=${(s) => {
        sets.reload()
        setOpen(s)
      }}
    />
  </section>`
}
