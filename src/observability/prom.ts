/**
 * The prom-client classes Quill uses, each loaded from its own file. prom-client's index also loads its default
 * process metrics (event-loop monitors, GC observers), which Quill does not collect: that cost ~125 ms of CPU in
 * every thread at every start (the front and each shard worker). The types are the package's own.
 */
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const load = createRequire(import.meta.url);

export const Registry: typeof Prom.Registry = load('prom-client/lib/registry');
export const AggregatorRegistry: typeof Prom.AggregatorRegistry = load('prom-client/lib/cluster');
export const Counter: typeof Prom.Counter = load('prom-client/lib/counter');
export const Gauge: typeof Prom.Gauge = load('prom-client/lib/gauge');
export const Histogram: typeof Prom.Histogram = load('prom-client/lib/histogram');
export type Registry = Prom.Registry;
export type Counter<T extends string = string> = Prom.Counter<T>;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export type Histogram<T extends string = string> = Prom.Histogram<T>;
export type { MetricObjectWithValues, MetricValue } from 'prom-client';
