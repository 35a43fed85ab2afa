import type { HTMLElement } from 'node-html-parser'
import { applyDataMap } from '../extract/data-map'
import { extractFields } from '../extract/fields'
import { selectAll, selectFirst } from '../extract/select'
import { attrOf, baseOf, parseTree, textOf } from '../extract/tree'
import { cleanHtml } from './clean'
import { textAsHtml, urlsInText, type DocumentKind } from './document'
import { toMarkdown } from './markdown'
import type { ParseContext, StepResult } from './pipeline'
import type { Navigator, Pipeline, Step } from './pipeline-schema'
import { passes } from './regex'
import { linkOutsFrom, rewriterSupports, scanHtml, type LinkOut, type LinkSource, type Metadata, type Scan } from './scan'
import { absoluteHttp } from './html-values'
import { htmlToText } from './text'

const DEFAULT_SELECTOR = 'a[href]'
const NO_METADATA: Metadata = { title: null, description: null, canonical: null, language: null, open_graph: {}, json_ld: [] }

/**
 * One decoded document and the work done on it so far. Pipelines ask it for steps; whatever
 * two pipelines share (the scan, the node-html-parser tree, a markdown rendering
 * with the same options) is computed once. Only steps that need a tree build one.
 */
export class ParsedDocument {
  private scanned?: Promise<Scan>
  private built?: { root: HTMLElement; base: string }
  private readonly done = new Map<string, Promise<StepResult>>()
  /** Navigator selectors the scan can serve (anchors from its walk, others by an HTMLRewriter pass). */
  private readonly streamed: string[]

  constructor(
    readonly kind: DocumentKind,
    readonly text: string,
    readonly baseUrl: string,
    pipelines: readonly Pipeline[],
  ) {
    const selectors = pipelines.flatMap((p) => (p.navigator ? [p.navigator.selector ?? DEFAULT_SELECTOR] : []))
    this.streamed = [...new Set(selectors)].filter(rewriterSupports)
  }

  /** Links, metadata and assets from the scan's one walk over the tags (for text: the URLs written in it). */
  scan(): Promise<Scan> {
    if (this.kind === 'text') {
      const links = urlsInText(this.text).map((url): LinkOut => ({ url, text: '', rel: [], nofollow: false }))
      return Promise.resolve({ base_url: this.baseUrl, links, metadata: NO_METADATA, assets: [], robots_nofollow: false, selected: [] })
    }
    return (this.scanned ??= scanHtml(this.text, this.baseUrl, { navigators: this.streamed }))
  }

  /** The element tree (built on first use) and the base URL its <base href> sets. */
  tree(): { root: HTMLElement; base: string } {
    if (!this.built) {
      const root = parseTree(this.kind === 'html' ? this.text : '')
      this.built = { root, base: baseOf(root, this.baseUrl) }
    }
    return this.built
  }

  /** The links a navigator selects, absolute and deduplicated, filtered by its include/exclude. */
  async navigate(nav: Navigator): Promise<LinkOut[]> {
    const scan = await this.scan()
    const selector = nav.selector ?? DEFAULT_SELECTOR
    let links: LinkOut[]
    if (this.kind === 'text') links = scan.links
    else {
      const i = this.streamed.indexOf(selector)
      links = (i >= 0 ? scan.selected[i] : undefined) ?? this.treeLinks(selector, scan)
    }
    return links.filter((l) => passes(l.url, nav.include, nav.exclude))
  }

  /** One step's result; identical steps of several pipelines share one computation. */
  step(step: Step, ctx: ParseContext): Promise<StepResult> {
    const key = JSON.stringify(step)
    let result = this.done.get(key)
    if (!result) {
      result = this.compute(step, ctx)
      this.done.set(key, result)
    }
    return result
  }

  private async compute(step: Step, ctx: ParseContext): Promise<StepResult> {
    const html = this.kind === 'html'
    switch (step.kind) {
      case 'markdown':
        return { kind: 'markdown', content: html ? toMarkdown(this.text, this.baseUrl, { skip_tags: step.skip_tags, main_content: step.main_content }) : this.text }
      case 'html':
        return { kind: 'html', content: html ? await cleanHtml(this.text, this.baseUrl) : textAsHtml(this.text) }
      case 'text':
        return { kind: 'text', content: html ? await htmlToText(this.text) : this.text }
      case 'metadata':
        return { kind: 'metadata', metadata: (await this.scan()).metadata }
      case 'links':
        return { kind: 'links', links: (await this.scan()).links }
      case 'fields': {
        const { root, base } = this.tree()
        return { kind: 'fields', ...extractFields(root, step.fields, base) }
      }
      case 'data_map': {
        const map = ctx.dataMap(step.id)
        if (!map) return { kind: 'data_map', id: step.id, error: { error: 'not_found', message: `data map ${step.id} not found` } }
        const { root, base } = this.tree()
        return { kind: 'data_map', id: step.id, ...applyDataMap(root, map, base) }
      }
    }
  }

  /**
   * Navigator links for a selector HTMLRewriter cannot serve, from the tree, by the scan's
   * rules: the document's base, anchor text or else an image's alt, rel tokens, robots meta.
   */
  private treeLinks(selector: string, scan: Scan): LinkOut[] {
    const sources: LinkSource[] = []
    for (const el of selectAll(this.tree().root, selector)) {
      const href = attrOf(el, 'href')
      const url = href === undefined ? null : absoluteHttp(href, scan.base_url)
      if (!url) continue
      const text = textOf(el)
      const img = text ? null : selectFirst(el, 'img[alt]')
      sources.push({ url, rel: attrOf(el, 'rel') ?? null, text, alt: img ? attrOf(img, 'alt') : undefined })
    }
    return linkOutsFrom(sources, scan.robots_nofollow)
  }
}
