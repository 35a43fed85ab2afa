// The lists of every page as tables that become one card a row on a phone (style.css): each
// column's label heads it and labels its cells (data-label), written once.
import { html } from './html.js'

/**
 * `columns`: [label, cell(row), class?] each; a null label is the row's actions (no heading,
 * class "actions"). `attrs(row)` gives the row's own attributes (key, data-id, a class).
 */
export function Table({ name, columns, rows, attrs = () => ({}) }) {
  return html`<table class=${`list ${name}`}>
    <thead>
      <tr>
        ${columns.map(([label]) => html`<th>${label ?? ''}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (row) =>
          html`<tr ...${attrs(row)}>
            ${columns.map(([label, cell, cls]) => (label === null ? html`<td class="actions">${cell(row)}</td>` : html`<td data-label=${label} class=${cls}>${cell(row)}</td>`))}
          </tr>`,
      )}
    </tbody>
  </table>`
}
