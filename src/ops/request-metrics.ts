/**
 * Request counts and latencies, kept in plain numbers on the request path and turned into
 * Prometheus metrics when they are scraped. prom-client's own inc() and observe() validate and
 * hash the labels of every call, a cost the warm site path must not carry (docs/benchmarks.md);
 * counting here is a few map lookups and additions.
 */
import { Counter, type Metric, type Registry } from 'prom-client'

/** From half a millisecond (a warm site file) to 10 s (a maximal publish), in seconds. */
export const REQUEST_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** What one route pattern and method have seen. */
class Series {
  readonly statuses = new Map<number, number>()
  /** Requests by the first bound they are within; the last slot is over every bound (+Inf). */
  readonly buckets = new Array<number>(REQUEST_SECONDS.length + 1).fill(0)
  count = 0
  sum = 0
}

/** One sample of the exposition, as prom-client's registry formats them. */
interface Sample {
  metricName: string
  labels: Record<string, string | number>
  value: number
}

export class RequestMetrics {
  /** route -> method -> series. Routes are route patterns or fixed names, methods those node:http parses: both bounded. */
  private readonly routes = new Map<string, Map<string, Series>>()

  /** Registers `{prefix}_requests_total` (a counter) and `{prefix}_request_duration_seconds` (a histogram). */
  constructor(registry: Registry, prefix: string) {
    const series = () => this.series()
    new Counter({
      name: `${prefix}_requests_total`,
      help: 'HTTP requests answered, by route pattern (site: published sites, oauth: the OAuth server), method and status.',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
      collect() {
        this.reset()
        for (const [route, method, seen] of series()) for (const [status, count] of seen.statuses) this.inc({ route, method, status }, count)
      },
    })
    const name = `${prefix}_request_duration_seconds`
    // A histogram prom-client formats like its own; its Histogram class can only be fed one observation at a time.
    const histogram = {
      name,
      help: 'Time from a request arriving to its response being handed to the operating system, by route pattern and method.',
      type: 'histogram',
      aggregator: 'sum',
      reset: () => this.routes.clear(),
      get: () =>
        Promise.resolve({
          name: histogram.name,
          help: histogram.help,
          type: histogram.type,
          aggregator: histogram.aggregator,
          values: samples(name, series()),
        }),
    }
    registry.registerMetric(histogram as unknown as Metric)
  }

  record(route: string, method: string, status: number, seconds: number): void {
    let methods = this.routes.get(route)
    if (methods === undefined) this.routes.set(route, (methods = new Map<string, Series>()))
    let series = methods.get(method)
    if (series === undefined) methods.set(method, (series = new Series()))
    series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1)
    let bucket = 0
    while (bucket < REQUEST_SECONDS.length && seconds > REQUEST_SECONDS[bucket]!) bucket++
    series.buckets[bucket]!++
    series.count++
    series.sum += seconds
  }

  private *series(): Iterable<[string, string, Series]> {
    for (const [route, methods] of this.routes) for (const [method, series] of methods) yield [route, method, series]
  }
}

/** The histogram's samples: cumulative buckets up to +Inf, then the sum and the count of each series. */
function samples(name: string, all: Iterable<[string, string, Series]>): Sample[] {
  const values: Sample[] = []
  for (const [route, method, series] of all) {
    let cumulative = 0
    REQUEST_SECONDS.forEach((le, i) => {
      cumulative += series.buckets[i]!
      values.push({ metricName: `${name}_bucket`, labels: { route, method, le }, value: cumulative })
    })
    values.push({ metricName: `${name}_bucket`, labels: { route, method, le: '+Inf' }, value: series.count })
    values.push({ metricName: `${name}_sum`, labels: { route, method }, value: series.sum })
    values.push({ metricName: `${name}_count`, labels: { route, method }, value: series.count })
  }
  return values
}
