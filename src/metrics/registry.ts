/**
 * A metrics registry written for trawl (decision 115): counters, gauges and histograms with label
 * names fixed when they are made, and their exposition in the Prometheus text format 0.0.4. It
 * imports nothing of the project, so any layer may count.
 *
 * The hot path is a child: one label combination, resolved once (`labels(...)`) and kept by its
 * caller, whose `inc()` is an add. A label whose value is the empty string is left out of the
 * exposition, as Prometheus reads `{a=""}` and `{}` the same: a label a setting turns off
 * (TRAWL_METRICS_TENANTS) is given `''`.
 */

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/

export type MetricType = 'counter' | 'gauge' | 'histogram'

/** Work run before each exposition: gauges read from elsewhere (the store, the process). */
export type Collector = () => void | Promise<void>

export class CounterChild {
  value = 0
  inc(n = 1): void {
    this.value += n
  }
}

export class GaugeChild {
  value = 0
  set(v: number): void {
    this.value = v
  }
  inc(n = 1): void {
    this.value += n
  }
}

export class HistogramChild {
  /** Observations per bucket, not cumulative (the exposition sums them); the last is +Inf's own. */
  readonly counts: number[]
  sum = 0
  count = 0
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0)
  }
  observe(v: number): void {
    const b = this.bounds
    let i = 0
    while (i < b.length && v > b[i]!) i++
    this.counts[i]!++
    this.sum += v
    this.count++
  }
}

type Child = CounterChild | GaugeChild | HistogramChild

/** One metric family: its children by label values. */
abstract class Family<C extends Child> {
  private readonly children = new Map<string, { values: readonly string[]; child: C }>()

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`metric name ${JSON.stringify(name)} is not a Prometheus name`)
    for (const l of labelNames) if (!LABEL.test(l) || l.startsWith('__')) throw new Error(`label name ${JSON.stringify(l)} of ${name} is not a Prometheus label name`)
    if (new Set(labelNames).size !== labelNames.length) throw new Error(`${name} names a label twice`)
  }

  protected abstract make(): C

  /** The child of these label values (one per label name, in order), made on first use. */
  labels(...values: string[]): C {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name} takes ${this.labelNames.length} label values (${this.labelNames.join(', ')}), got ${values.length}`)
    // One value is the common case, and its own key.
    const key = values.length === 1 ? values[0]! : values.join('\u0000')
    let entry = this.children.get(key)
    if (!entry) {
      entry = { values: [...values], child: this.make() }
      this.children.set(key, entry)
    }
    return entry.child
  }

  /** Forgets every child: a gauge refilled at each scrape drops the label values no longer there. */
  reset(): void {
    this.children.clear()
  }

  /** The children in the order they were made. */
  entries(): { values: readonly string[]; child: C }[] {
    // An unlabelled family always shows its one sample, zero before anything happened.
    if (this.labelNames.length === 0 && this.children.size === 0) this.labels()
    return [...this.children.values()]
  }
}

export class Counter extends Family<CounterChild> {
  protected make() {
    return new CounterChild()
  }
  /** The unlabelled counter's increment. */
  inc(n = 1): void {
    this.labels().inc(n)
  }
}

export class Gauge extends Family<GaugeChild> {
  protected make() {
    return new GaugeChild()
  }
  set(v: number): void {
    this.labels().set(v)
  }
}

export class Histogram extends Family<HistogramChild> {
  readonly bounds: readonly number[]
  constructor(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]) {
    super(name, help, 'histogram', labelNames)
    if (labelNames.includes('le')) throw new Error(`${name}: a histogram cannot have a label named le`)
    if (bounds.length === 0 || bounds.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= bounds[i - 1]!))) throw new Error(`${name}: buckets must be finite and increasing`)
    this.bounds = [...bounds]
  }
  protected make() {
    return new HistogramChild(this.bounds)
  }
  observe(v: number): void {
    this.labels().observe(v)
  }
}

type AnyFamily = Counter | Gauge | Histogram

export class Registry {
  private readonly families = new Map<string, AnyFamily>()
  private readonly collectors: Collector[] = []

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, 'counter', labelNames))
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, 'gauge', labelNames))
  }

  histogram(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labelNames, bounds))
  }

  /**
   * Runs before every exposition; a collector that throws leaves its metrics as they were and the
   * others go on. Answers the function that removes it (a server that stops).
   */
  collect(collector: Collector): () => void {
    this.collectors.push(collector)
    return () => {
      const i = this.collectors.indexOf(collector)
      if (i >= 0) this.collectors.splice(i, 1)
    }
  }

  /** The text exposition (format 0.0.4) after the collectors ran; `failed` is told of each collector that threw. */
  async expose(failed: (err: unknown) => void = () => {}): Promise<string> {
    await Promise.all(
      this.collectors.map(async (c) => {
        try {
          await c()
        } catch (err) {
          failed(err)
        }
      }),
    )
    return this.text()
  }

  /** The exposition of the values as they are, collectors not run. */
  text(): string {
    const out: string[] = []
    for (const f of this.families.values()) {
      out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`)
      for (const { values, child } of f.entries() as { values: readonly string[]; child: Child }[]) {
        if (child instanceof HistogramChild) {
          const bounds = (f as Histogram).bounds
          let cumulative = 0
          for (let i = 0; i <= bounds.length; i++) {
            cumulative += child.counts[i]!
            const le = i < bounds.length ? formatValue(bounds[i]!) : '+Inf'
            out.push(`${f.name}_bucket${labelText(f.labelNames, values, le)} ${cumulative}`)
          }
          out.push(`${f.name}_sum${labelText(f.labelNames, values)} ${formatValue(child.sum)}`, `${f.name}_count${labelText(f.labelNames, values)} ${child.count}`)
        } else {
          out.push(`${f.name}${labelText(f.labelNames, values)} ${formatValue(child.value)}`)
        }
      }
    }
    return out.join('\n') + '\n'
  }

  private add<F extends AnyFamily>(family: F): F {
    if (this.families.has(family.name)) throw new Error(`metric ${family.name} is registered twice`)
    this.families.set(family.name, family)
    return family
  }
}

/** `{a="x",b="y"}` with empty values left out; `le` last for a histogram's bucket. */
function labelText(names: readonly string[], values: readonly string[], le?: string): string {
  const pairs: string[] = []
  names.forEach((n, i) => {
    if (values[i] !== '') pairs.push(`${n}="${escapeLabelValue(values[i]!)}"`)
  })
  if (le !== undefined) pairs.push(`le="${le}"`)
  return pairs.length ? `{${pairs.join(',')}}` : ''
}

/** A label value as the format quotes it: backslash, double quote and line feed escaped. */
export const escapeLabelValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

/** HELP text: backslash and line feed escaped (a double quote stays). */
export const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')

/** A sample value as Go's ParseFloat reads it, with the format's spellings of infinities and NaN. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  return String(v)
}

/** The Content-Type of the exposition. */
export const EXPOSITION_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
