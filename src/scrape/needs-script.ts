/**
 * Whether an HTML page needs script to show its content: the test behind TRAWL_SCRAPE_RENDER=auto
 * (docs/scrape.md "Rendering", decision 94). A scrape fetches with the standard client first and
 * pays for Chromium only when this says so.
 *
 * One pass of a regular expression over the decoded text, no tree: tags are skipped, and the
 * content of script, style, noscript, template and title elements and of comments is no visible
 * text. It stops as soon as the body has shown enough text to be a page by itself, so a static
 * article costs a few tens of microseconds.
 */

/** Why a page is rendered. */
export type RenderReason = 'little_text' | 'empty_app_root' | 'noscript_asks_javascript'

/** Visible characters (whitespace not counted) below which a page with script is an empty shell. */
export const SHELL_TEXT = 200
/**
 * Visible characters below which an empty app root or a <noscript> asking for JavaScript still
 * means the content is script's to write; at or above it the page stands without script, and
 * the scan stops counting.
 */
export const STRONG_TEXT = 2000

// One token a turn: a comment, a tag, a stray `<`, or a run of text. The content of a hidden
// element is skipped by finding its end tag (HIDDEN_END), not by this expression: a
// back-reference would keep it off the regular-expression JIT.
const TOKEN = /<!--[\s\S]*?(?:-->|$)|<(\/?)([a-zA-Z][\w:-]*)([^>]*)>|<|[^<]+/y
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'title', 'textarea'])
const HIDDEN_END = new Map([...HIDDEN].map((name) => [name, new RegExp(`</${name}\\s*>`, 'gi')]))
const BODY = /<body\b|<\/head\s*>/i
// The mount points single-page frameworks render into: React (root, react-root), Vue (app),
// Next.js (__next), Nuxt (__nuxt), Gatsby (___gatsby), Svelte (svelte), Angular (<app-root>).
const APP_ROOT_IDS = new Set(['root', 'app', '__next', '__nuxt', '___gatsby', 'svelte', 'react-root', 'app-root'])
const ID = /\bid\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i
const EMPTY_CONTENT = /\s*<\/([a-zA-Z][\w:-]*)\s*>/y
const SCRIPT_TYPE = /\btype\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i
// Script types a browser runs; JSON-LD, templates and data blocks are not.
const RUNS = /^(?:|module|(?:text|application)\/(?:x-)?(?:java|ecma)script(?:1\.\d)?|text\/jscript|text\/livescript)$/i
const ASKS_FOR_JAVASCRIPT =
  /\b(?:enable|turn on|activate|allow)\b[^<]{0,40}\bjavascript\b|\bjavascript\b[^<]{0,40}\b(?:required|needed|disabled|must be (?:on|enabled|turned on)|is (?:off|not enabled))\b/i

/** The reason `html` needs script to show its content, or null when it shows without. */
export function needsScript(html: string): RenderReason | null {
  const body = BODY.exec(html)
  const bodyStart = body ? body.index : 0
  let text = 0
  let scripts = 0
  let appRoot = false
  let asksForScript = false
  TOKEN.lastIndex = 0
  let m: RegExpExecArray | null
  while ((m = TOKEN.exec(html)) !== null) {
    const [token, close, tag, attrs] = m
    if (tag !== undefined) {
      if (close !== '') continue
      const name = tag.toLowerCase()
      const end = HIDDEN_END.get(name)
      if (end) {
        end.lastIndex = TOKEN.lastIndex
        const found = end.exec(html)
        const content = html.slice(TOKEN.lastIndex, found ? found.index : html.length)
        TOKEN.lastIndex = found ? end.lastIndex : html.length
        if (name === 'script' && runs(attrs!)) scripts++
        else if (name === 'noscript' && !asksForScript && ASKS_FOR_JAVASCRIPT.test(content)) asksForScript = true
      } else if (!appRoot && isAppRoot(name, attrs!, html, TOKEN.lastIndex)) appRoot = true
    } else if (token[0] !== '<' && m.index >= bodyStart) {
      text += visible(token)
      if (text >= STRONG_TEXT) return null
    }
  }
  if (scripts === 0) return null
  if (text < SHELL_TEXT) return 'little_text'
  if (appRoot) return 'empty_app_root'
  if (asksForScript) return 'noscript_asks_javascript'
  return null
}

/** Whether a start tag is a framework's mount point with nothing in it (`<div id="root"></div>`). */
function isAppRoot(lower: string, attrs: string, html: string, after: number): boolean {
  if (lower !== 'app-root') {
    const id = ID.exec(attrs)
    if (!id || !APP_ROOT_IDS.has(id[1] ?? id[2] ?? id[3]!)) return false
  }
  EMPTY_CONTENT.lastIndex = after
  const end = EMPTY_CONTENT.exec(html)
  return end !== null && end[1]!.toLowerCase() === lower
}

function runs(attrs: string): boolean {
  const type = SCRIPT_TYPE.exec(attrs)
  return !type || RUNS.test((type[1] ?? type[2] ?? type[3]!).trim())
}

/** Characters of a text run that are not whitespace (an entity counts as several; close enough). */
function visible(run: string): number {
  let n = 0
  for (let i = 0; i < run.length; i++) if (run.charCodeAt(i) > 32) n++
  return n
}
