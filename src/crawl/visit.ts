import { FetchError } from '../fetch/errors'
import type { FetchResult } from '../fetch/types'
import { parsedArtifactJson } from '../parse/crawl-pipeline'
import { documentKind } from '../parse/document'
import { parseDocument, ParseFailure, type ParseResult } from '../parse/pipeline'
import { newPageRecord, PAGE_STEP_BIT, type Claimed, type PageRecord, type RunJournal } from '../store/crawl-store'
import { ASSET, PAGE } from '../store/frontier'
import type { RunExecution } from './execution'
import { reasonOf } from './fetch-reasons'
import { bodyRead, pageFinished } from './gc'
import type { Host } from './host-slots'
import { interruptedEntry } from './interrupted'
import type { EngineLog } from './page-batch'
import { pageCounters, stepSeconds, type PageCounters } from '../metrics'
import type { LogStep } from '../store/crawl-log-types'
import { hostHash, hostOf, hostPortOf, linkHash, normalizeUrl } from '../core/url'

const MAX_HOST_FAILURES = 5
const MAX_ATTEMPTS = 3
const UTF8 = new TextEncoder()
const NETWORK = new Set(['dns', 'connect', 'tls', 'timeout', 'proxy'])
/** The steps a visit times, as its log entries' latency_ms measures them (docs/metrics.md). */
const stepTimer = (step: LogStep) => stepSeconds.labels(step)
const FETCH_SECONDS = stepTimer('fetch')
const PARSE_SECONDS = stepTimer('parse')
const STORE_SECONDS = stepTimer('store')
/** Bits of PageRecord.logged: the successful entries a visit row stands for (migration 013). */
const { fetch: FETCH_OK, parse: PARSE_OK, store: STORE_OK, discover: DISCOVER_OK } = PAGE_STEP_BIT

/**
 * One URL's visit (design.md §5): robots, fetch, parse, store, discover, and the page record that
 * holds them. A page's successful steps are bits of its record, not log rows (decision 101);
 * everything else is logged as before.
 */
export class PageVisitor {
  /** Pipelines light enough to run on this thread (links and metadata only). */
  private readonly inThread: boolean
  private lastVisitedAt = 0
  /** The process's page counters of this run's tenant (/metrics), beside the run's own. */
  private readonly counted: PageCounters

  constructor(
    private readonly x: RunExecution,
    private readonly journal: RunJournal,
  ) {
    this.counted = pageCounters(x.run.tenant)
    this.inThread = x.pipelines.every(
      (p) => (p.steps ?? []).every((st) => st.kind === 'metadata' || st.kind === 'links') && (p.guards ?? []).every((g) => g.kind !== 'category') && (p.steps ?? []).length > 0,
    )
  }

  async visit(host: Host, c: Claimed) {
    try {
      await this.run(host, c)
    } finally {
      pageFinished()
    }
  }

  private async run(host: Host, c: Claimed) {
    const x = this.x
    if (!host.origin) host.origin = new URL(c.url).origin
    if (host.robots) {
      const u = new URL(c.url)
      if (!host.robots.allowed(u.pathname + u.search)) {
        if (c.depth === 0 && c.parent === null) x.seedsDisallowed++
        if (host.unreachable) return this.unreachable(host, c)
        x.batch.log({ ...where(c), step: 'robots', status: 'skipped', error_reason: 'robots_disallowed', error_detail: 'robots.txt disallows this URL' })
        x.batch.mark({ seq: c.seq, to: 'done' })
        x.counters.queued--
        this.counted.disallowed.inc()
        return
      }
    }
    const started = Date.now()
    const sent = this.journal.start({ ...where(c), step: 'fetch', started_at: started })
    let result: FetchResult
    try {
      result = await x.deps.fetcher.fetch({ ...x.fetchBase, url: c.url }, x.run.tenant, x.abort.signal)
    } catch (err) {
      // Stopped or shut down: the URL stays queued (the checkpoint requeues it), and the fetch,
      // which the server may have seen, is logged as such.
      if (x.abort.signal.aborted) return this.interrupted(sent, c, started)
      return this.failed(sent, host, c, err, Date.now() - started)
    }
    const fetchedAt = Date.now()
    const latency = fetchedAt - started
    FETCH_SECONDS.observe(latency / 1000)
    if (x.leavingPromptly()) return this.interrupted(sent, c, started, result.status)
    if (host.failures > 0) this.setFailures(host, 0)
    if ((result.status === 429 || result.status === 503) && c.attempts + 1 < MAX_ATTEMPTS) {
      const wait = x.hosts.backoff(host, result)
      const notBefore = Date.now() + wait
      x.batch.mark({ seq: c.seq, to: 'requeued', notBefore })
      // A shared run's row goes back to the frontier, where its host's holder takes it when it is due.
      if (!x.shared) host.delayed.push({ entry: { ...c, attempts: c.attempts + 1 }, at: notBefore })
      x.batch.log(
        {
          ...where(c),
          step: 'fetch',
          status: 'retried',
          error_reason: 'http_status',
          error_detail: `${result.status}; the host backs off for ${wait} ms`,
          http_status: result.status,
          latency_ms: latency,
        },
        fetchedAt,
        sent,
      )
      return
    }
    host.throttled = 0
    x.counters.bytes += result.body.byteLength
    this.counted.bytes.inc(result.body.byteLength)
    bodyRead(result.body.byteLength)
    const ok = result.status >= 200 && result.status < 300
    const record = this.record(host, c, result.status)
    if (ok || result.status < 400) {
      record.logged |= FETCH_OK
      record.fetch_at = fetchedAt
      record.fetch_ms = latency
    } else {
      x.countError(`http_${result.status}`)
      x.batch.log(
        { ...where(c), step: 'fetch', status: 'error', error_reason: 'http_status', error_detail: `the server answered ${result.status}`, http_status: result.status, latency_ms: latency },
        fetchedAt,
        sent,
      )
    }
    // Where redirects ended is the same page, and every hop of the chain led there: each is
    // marked seen so no one fetches it again.
    for (const r of result.redirects) this.markSeen(r.url, c)
    this.markSeen(result.final_url, c)

    if (x.needsPatterns) await x.ctx.prepareHosts([c.url, result.final_url])
    let parsed: ParseResult | null = null
    if (c.kind === PAGE && ok && result.content_type && documentKind(result.content_type)) parsed = await this.parse(c, result, record)
    else if (c.kind === PAGE && ok) {
      x.batch.log({ ...where(c), step: 'parse', status: 'skipped', error_reason: 'unsupported_content_type', error_detail: `content type ${result.content_type ?? '(none)'} is not parsed` })
    }
    await this.store(c, result, parsed, record)
    if (parsed) {
      if ((x.cfg.scope.categories ?? []).length) await x.ctx.prepareHosts(parsed.pipelines.flatMap((p) => (p.links ?? []).map((l) => l.url)))
      const found = x.discovery.found(c, parsed)
      if (found.depthCut) x.counters.depth_cut = 1
      x.batch.links(found.uncataloged)
      x.enqueue(found.next)
      record.children = found.children
      record.logged |= DISCOVER_OK
    }
    // Counted here, with the page's record and its mark, not when the answer came: a commit while
    // the page is parsed or stored would save a fetch whose page a kill -9 then leaves to be
    // fetched again, counted twice, and max_urls would end the run a page short for each. Until
    // here the page is in flight, which the max_urls check counts too.
    x.counters.fetched++
    this.finish(record, (record.logged & FETCH_OK) !== 0 ? sent : undefined)
    x.batch.mark({ seq: c.seq, to: 'done' })
    x.counters.visited++
    this.counted.visited.inc()
    x.counters.queued--
  }

  private record(host: Host, c: Claimed, status: number | null): PageRecord {
    return newPageRecord(c.hash, (host.hash ??= hostHash(hostOf(c.url))), c.depth, c.parent, status)
  }

  /** The record joins the batch, dated now: visit times never go back within an execution (the log list relies on it). */
  private finish(record: PageRecord, settles?: number) {
    const now = Math.max(Date.now(), this.lastVisitedAt)
    this.lastVisitedAt = now
    record.visited_at = now
    this.x.batch.page(record, settles)
  }

  /** A URL of a host whose robots.txt got no answer: it fails with that fetch's reason, unfetched. */
  private unreachable(host: Host, c: Claimed) {
    const x = this.x
    const why = host.unreachable!
    x.batch.log({ ...where(c), step: 'fetch', status: 'error', error_reason: why.error_reason, error_detail: `not fetched: robots.txt got no answer (${why.error_detail})`.slice(0, 2000) })
    this.failPage(host, c, why.error_reason)
  }

  /** A URL that failed (its error entry logged): a visit row without status, the frontier row failed, counted by reason. */
  private failPage(host: Host, c: Claimed, reason: string) {
    const x = this.x
    this.finish(this.record(host, c, null))
    x.batch.mark({ seq: c.seq, to: 'failed' })
    x.counters.failed++
    x.counters.queued--
    this.counted.failed.inc()
    x.countError(reason)
  }

  /** A host's consecutive failures, kept in run_hosts with the page's rows: a resumed run goes on counting. */
  private setFailures(host: Host, failures: number) {
    host.failures = failures
    this.x.batch.hostFailures(host.key, failures)
  }

  /**
   * A fetch cut short by a stop or a shutdown (aborted, or answered too late to be recorded):
   * the URL stays queued, `retried` when a later execution will fetch it, `error` when the run
   * was stopped for good. Its entry is dated when the fetch started, like one written after a
   * crash: nothing about the page happened after the stop.
   */
  private interrupted(sent: number, c: Claimed, started: number, status?: number) {
    const x = this.x
    const stopped = x.leaving !== null && 'left' in x.leaving && x.leaving.left === 'stopped'
    x.batch.log(interruptedEntry(where(c), 'fetch', stopped ? 'error' : 'retried', { latency_ms: Date.now() - started, ...(status !== undefined ? { http_status: status } : {}) }), started, sent)
  }

  private failed(sent: number, host: Host, c: Claimed, err: unknown, latency: number) {
    const x = this.x
    const reason = reasonOf(err)
    FETCH_SECONDS.observe(latency / 1000)
    if (err instanceof FetchError && NETWORK.has(err.code)) this.setFailures(host, host.failures + 1)
    x.batch.log({ ...where(c), step: 'fetch', status: 'error', ...reason, latency_ms: latency }, Date.now(), sent)
    this.failPage(host, c, reason.error_reason)
    if (host.failures >= MAX_HOST_FAILURES) {
      // A host that keeps failing is given up on: what it still has queued fails with it.
      const given = [...host.buffer.splice(0), ...host.delayed.splice(0).map((d) => d.entry)]
      for (const row of given) {
        x.batch.mark({ seq: row.seq, to: 'failed' })
        x.batch.log({ ...where(row), step: 'fetch', status: 'error', error_reason: 'host_unreachable', error_detail: `${host.key} failed ${host.failures} times in a row` })
        x.counters.failed++
        x.counters.queued--
      }
      this.counted.failed.inc(given.length)
      x.countError('host_unreachable', given.length)
    }
  }

  private async parse(c: Claimed, r: FetchResult, record: PageRecord): Promise<ParseResult | null> {
    const x = this.x
    const started = Date.now()
    try {
      const input = { url: c.url, body: r.body, content_type: r.content_type!, redirects: r.redirects, pipelines: x.pipelines, collect_assets: x.cfg.store.assets }
      // Links and metadata come from the scan's one walk over the tags, cheaper than handing the
      // page to a worker and back (a worker per page made a crawler slower: design.md, measured
      // fact 14). Pipelines with heavier steps, categories or data maps go to the parse workers
      // and their time limit.
      const result = this.inThread ? await parseDocument(input, x.ctx) : await x.deps.parser.parse(input, x.ctx, x.run.tenant)
      const latency = Date.now() - started
      PARSE_SECONDS.observe(latency / 1000)
      const only = result.pipelines.length === 1 ? result.pipelines[0]! : null
      if (only && only.status === 'ran' && !only.skipped_reason) {
        record.logged |= PARSE_OK
        record.parse_ms = latency
        record.pipeline_id = only.identifier
      } else {
        for (const p of result.pipelines) {
          x.batch.log({
            ...where(c),
            step: 'parse',
            status: p.status === 'ran' ? 'ok' : 'skipped',
            pipeline_id: p.identifier,
            latency_ms: latency,
            ...(p.skipped_reason ? { error_detail: `skipped: ${p.skipped_reason}` } : {}),
          })
        }
      }
      for (const p of result.pipelines) {
        for (const step of p.steps) {
          if (step.kind === 'data_map' && 'error' in step)
            x.batch.log({ ...where(c), step: 'extract', status: 'error', pipeline_id: p.identifier, error_reason: 'parse_error', error_detail: step.error.message })
          else if ((step.kind === 'fields' || step.kind === 'data_map') && 'errors' in step) {
            x.batch.log({
              ...where(c),
              step: 'extract',
              status: step.errors.length ? 'error' : 'ok',
              pipeline_id: p.identifier,
              ...(step.errors.length
                ? {
                    error_reason: 'parse_error' as const,
                    error_detail: step.errors
                      .map((e) => `${e.field}: ${e.message}`)
                      .join('; ')
                      .slice(0, 2000),
                  }
                : {}),
            })
          }
        }
      }
      return result
    } catch (err) {
      const unsupported = err instanceof ParseFailure && err.code === 'unsupported_content_type'
      const latency = Date.now() - started
      PARSE_SECONDS.observe(latency / 1000)
      x.batch.log({
        ...where(c),
        step: 'parse',
        status: unsupported ? 'skipped' : 'error',
        error_reason: unsupported ? 'unsupported_content_type' : 'parse_error',
        error_detail: (err as Error).message,
        latency_ms: latency,
      })
      return null
    }
  }

  /**
   * Artifacts: the raw body, one parsed JSON per pipeline that ran (design.md §4 `store`). The
   * default pipeline's JSON is made again from the raw body when read, so its row names the raw
   * blob and nothing more is put (decision 103); if the raw body was refused, the JSON is stored.
   */
  private async store(c: Claimed, r: FetchResult, parsed: ParseResult | null, record: PageRecord) {
    const x = this.x
    const wanted: { kind: 'raw' | 'parsed' | 'asset'; pipeline: string | null; body: Uint8Array; type: string }[] = []
    const type = r.content_type ?? 'application/octet-stream'
    const raw = c.kind === ASSET ? null : x.cfg.store.raw
    if (c.kind === ASSET) wanted.push({ kind: 'asset', pipeline: null, body: r.body, type })
    else if (raw) wanted.push({ kind: 'raw', pipeline: null, body: r.body, type })
    let derived: { pipeline: string; json: string } | null = null
    if (parsed && x.cfg.store.parsed) {
      for (const p of parsed.pipelines) {
        if (p.status !== 'ran') continue
        const json = parsedArtifactJson(parsed, p)
        if (raw && x.derivesParsed) derived = { pipeline: p.identifier, json }
        else wanted.push({ kind: 'parsed', pipeline: p.identifier, body: UTF8.encode(json), type: 'application/json' })
      }
    }
    if (!wanted.length && !derived) return
    const count = wanted.length + (derived ? 1 : 0)
    const started = Date.now()
    // Each artifact stands alone: one the store refused does not drop the others' rows (their
    // blobs are stored already, and a row is what lets them be listed and deleted).
    const settled = await Promise.allSettled(wanted.map((w) => x.batch.artifact(c.hash, w.kind, w.pipeline, w.body, w.type, x.deps.blobs)))
    if (derived) {
      const rawRow = settled[0]!
      if (rawRow.status === 'fulfilled') x.batch.parsedOf(rawRow.value, derived.pipeline, Buffer.byteLength(derived.json), parsed!.base_url)
      else {
        const body = UTF8.encode(derived.json)
        wanted.push({ kind: 'parsed', pipeline: derived.pipeline, body, type: 'application/json' })
        settled.push((await Promise.allSettled([x.batch.artifact(c.hash, 'parsed', derived.pipeline, body, 'application/json', x.deps.blobs)]))[0]!)
      }
    }
    const refused: string[] = []
    settled.forEach((s, i) => {
      if (s.status === 'rejected') refused.push(`${wanted[i]!.kind}${wanted[i]!.pipeline ? ` (${wanted[i]!.pipeline})` : ''}: ${(s.reason as Error)?.message ?? String(s.reason)}`)
    })
    const latency = Date.now() - started
    STORE_SECONDS.observe(latency / 1000)
    if (!refused.length) {
      record.logged |= STORE_OK
      record.store_ms = latency
    } else {
      const detail = `${refused.length} of ${count} artifacts not stored: ${refused.join('; ')}`
      x.batch.log({ ...where(c), step: 'store', status: 'error', error_reason: 'store_error', error_detail: detail.slice(0, 2000), latency_ms: latency })
    }
  }

  /** A redirect's hop or target: fetched now, so it leaves the queue or enters the frontier as done. */
  private markSeen(raw: string, c: Claimed) {
    const x = this.x
    // Most fetches end where they began: the URL as fetched is the normalized one.
    if (raw === c.url) return
    const url = normalizeUrl(raw)
    if (!url || url === c.url) return
    const hash = linkHash(url)
    const { added, cataloged } = x.discovery.markFetched(hash)
    if (!added) {
      // Already queued (not yet fetched): the redirect fetched it, so it leaves the queue.
      const h = x.hosts.find(hostPortOf(url))
      const i = h ? h.buffer.findIndex((e) => e.hash === hash) : -1
      if (h && i >= 0) {
        const [gone] = h.buffer.splice(i, 1)
        x.counters.queued--
        x.batch.mark({ seq: gone!.seq, to: 'done' })
      }
      return
    }
    const seq = ++x.nextSeq
    if (!cataloged) x.batch.links([url])
    x.batch.enqueue([x.discovery.entry(url, c.depth, c.parent, PAGE, hash)], seq, true)
  }
}

function where(c: Claimed): Pick<EngineLog, 'url' | 'url_hash' | 'host' | 'depth' | 'parent_url_hash'> {
  // Logs name the host as the catalogue does (no port); `c.host` keys politeness per origin.
  return { url: c.url, url_hash: c.hash, host: hostOf(c.url), depth: c.depth, ...(c.parent ? { parent_url_hash: c.parent } : {}) }
}
