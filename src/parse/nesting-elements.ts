// What boundNesting's model of the HTML tree builder (nesting.ts) knows of each element name:
// the categories of the standard's tree construction rules an element belongs to, as bits, and
// the start tags that close a sibling.

// What the tree builder does with an element of a name, as bits.
export const VOID = 1 // no content, no end tag
export const RAW_TEXT = 1 << 1 // text up to its end tag (plaintext: to the end)
export const IGNORED = 1 << 2 // html, head, body: never opened inside <body>
export const SPECIAL = 1 << 3 // "special" category: ends the search of "any other end tag"
export const LIST_STOP = 1 << 4 // special, except address, div, p, li, dd, dt: ends the search for an li/dd/dt
export const SCOPE = 1 << 5 // default scope boundary
export const CLOSES_P = 1 << 6 // its start tag closes an open <p>
export const HEADING = 1 << 7
export const SCOPED_END = 1 << 8 // its end tag closes it when in scope, whatever is open above
export const TABLE_PART = 1 << 9
export const BREAKOUT = 1 << 10 // its start tag ends foreign content
export const INTEGRATION = 1 << 11 // foreign element holding HTML (also special and a scope boundary)
export const ITEM = 1 << 12 // li, dd, dt
export const SECTION = 1 << 13 // tbody, thead, tfoot
export const TOP_SIBLING = 1 << 14 // option, optgroup, rb, rp, rt: close such an element on top
export const REOPENS = 1 << 15 // a, nobr: a second one closes the first

const FLAGS = new Map<string, number>()
const flag = (bit: number, names: string) => {
  for (const name of names.split(' ')) FLAGS.set(name, (FLAGS.get(name) ?? 0) | bit)
}
flag(VOID, 'area base basefont bgsound br col embed frame hr image img input keygen link meta param source track wbr')
// (domino, unlike browsers, parses <noscript> in the body as markup.)
flag(RAW_TEXT, 'script style xmp iframe noembed noframes textarea title plaintext')
flag(IGNORED, 'html head body')
const SPECIAL_NAMES =
  'address applet area article aside base basefont bgsound blockquote body br button caption center col colgroup ' +
  'dd details dir div dl dt embed fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head ' +
  'header hgroup hr html iframe img input keygen li link listing main marquee menu meta nav noembed noframes ' +
  'noscript object ol p param plaintext pre script search section select source style summary table tbody td ' +
  'template textarea tfoot th thead title tr track ul wbr xmp'
flag(SPECIAL, SPECIAL_NAMES)
flag(
  LIST_STOP,
  SPECIAL_NAMES.split(' ')
    .filter((n) => !['address', 'div', 'p', 'li', 'dd', 'dt'].includes(n))
    .join(' '),
)
flag(SCOPE, 'applet caption html table td th marquee object template')
flag(INTEGRATION, 'foreignobject desc title mi mo mn ms mtext annotation-xml')
flag(
  CLOSES_P,
  'address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer header ' +
    'hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 h6 pre listing form li dd dt plaintext xmp',
)
flag(HEADING, 'h1 h2 h3 h4 h5 h6')
flag(
  SCOPED_END,
  'address article aside blockquote button center details dialog dir div dl fieldset figcaption figure footer ' +
    'header hgroup listing main menu nav ol pre search section summary ul form applet marquee object dd dt',
)
flag(TABLE_PART, 'caption colgroup tbody thead tfoot tr td th')
flag(
  BREAKOUT,
  'b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu ' + 'meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var',
)
flag(ITEM, 'li dd dt')
flag(SECTION, 'tbody thead tfoot')
flag(TOP_SIBLING, 'option optgroup rb rp rt')
flag(REOPENS, 'a nobr')

// One per element name seen; `open` holds the stack indices of the open elements of that name.
// Known names share one Kind across calls; every call leaves `open` and `over` empty again.
export type Kind = { name: string; flags: number; open: number[]; over: number }
export const KNOWN = new Map<string, Kind>([...FLAGS].map(([name, flags]) => [name, { name, flags, open: [], over: 0 }]))
const known = (name: string) => KNOWN.get(name)!
export const K = {
  p: known('p'),
  li: known('li'),
  dd: known('dd'),
  dt: known('dt'),
  button: known('button'),
  table: known('table'),
  td: known('td'),
  th: known('th'),
  tr: known('tr'),
  tbody: known('tbody'),
  caption: known('caption'),
  template: known('template'),
  form: known('form'),
  ol: known('ol'),
  ul: known('ul'),
  select: known('select'),
  option: known('option'),
  optgroup: known('optgroup'),
}
export const HEADING_KINDS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map(known)

// Start tags closing an element of these kinds that is on top of the stack, or, past the cap,
// on top of the removed elements.
export const SIBLINGS = new Map<Kind, Kind[]>([
  [K.p, [K.p]],
  [K.li, [K.li]],
  [K.dd, [K.dd, K.dt]],
  [K.dt, [K.dd, K.dt]],
  [K.option, [K.option]],
  [K.optgroup, [K.option, K.optgroup]],
  [K.tr, [K.tr, K.td, K.th]],
  [K.td, [K.td, K.th]],
  [K.th, [K.td, K.th]],
  ...['rb', 'rp', 'rt'].map((n) => [known(n), ['rb', 'rp', 'rt'].map(known)] as [Kind, Kind[]]),
])

/** The stack index of the innermost open element of this kind, or -1. */
export function last(kind: Kind): number {
  const open = kind.open
  return open.length > 0 ? open[open.length - 1]! : -1
}
