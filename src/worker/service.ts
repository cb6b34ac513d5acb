/**
 * The small interface between a worker's runtime and the services it hosts. The runtime used to name every service
 * it carries (ingest, export, metrics, retention…), and each of them imports the runtime back: a circle in which
 * nothing can be read or tested alone. A service written against this file needs only `ServiceHost` (what it may
 * use of its worker), and the runtime knows services only as `WorkerService`s in a registry: the composition root
 * (src/worker/entry.ts) creates them and adds them, and an operation finds its service by a typed key.
 *
 * The session recordings are the first tenant built this way (src/worker/recordings/); the older services keep
 * their fields on the runtime until they move.
 */
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { SnapshotMetric } from '../observability/snapshot-metric.js';
import type { MetaStore } from '../stores/meta/meta-store.js';

/** What a service may use of the worker thread hosting it. */
export interface ServiceHost {
  readonly config: Readonly<Config>;
  /** This worker's index, and how many there are (a shard is owned by worker `shard % workerCount`). */
  readonly index: number;
  readonly workerCount: number;
  readonly log: Logger;
  /** The metadata environment (projects and their settings). */
  readonly meta: MetaStore;
  /** Whether the machine is saturated: background work then yields more (src/worker/ingest/apply-pacer.ts). */
  readonly contended: () => boolean;
}

/** A service a worker hosts: started once the worker's shards are open, closed before its stores are. */
export interface WorkerService {
  readonly name: string;
  /** Called with the data directory's shard count, once the layout is known. */
  start(shardCount: number): void | Promise<void>;
  /**
   * Called once the worker's shards have replayed their logs at start: what reads events (an alert's check) starts
   * then, so that it never answers from a store missing events acknowledged before a crash.
   */
  recovered?(): void;
  close(): Promise<void>;
  /** This worker's part of `/_stats`, under `name`: arrays are concatenated and numbers added across workers. */
  stats?(): Record<string, unknown>;
  /** Series for `/metrics` (read when scraped). */
  metrics?(): SnapshotMetric[];
}

/** Names a service in the registry with its type, so an operation gets the service it expects. */
export class ServiceKey<T extends WorkerService> {
  constructor(readonly name: string) {}

  /** The service of a worker's registry; throws if the composition root did not add it (a programming error). */
  of(services: Services): T {
    return services.get(this);
  }
}

export class Services {
  private readonly byName = new Map<string, WorkerService>();

  add(service: WorkerService): void {
    if (this.byName.has(service.name)) throw new Error(`service ${service.name} added twice`);
    this.byName.set(service.name, service);
  }

  get<T extends WorkerService>(key: ServiceKey<T>): T {
    const s = this.byName.get(key.name);
    if (!s) throw new Error(`no service ${key.name} in this worker`);
    return s as T;
  }

  async start(shardCount: number): Promise<void> {
    for (const s of this.byName.values()) await s.start(shardCount);
  }

  recovered(): void {
    for (const s of this.byName.values()) s.recovered?.();
  }

  /** Closes every service, in the reverse order of their addition. */
  async close(): Promise<void> {
    for (const s of [...this.byName.values()].reverse()) await s.close();
  }

  stats(): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const s of this.byName.values()) if (s.stats) out[s.name] = s.stats();
    return out;
  }

  metrics(): SnapshotMetric[] {
    return [...this.byName.values()].flatMap((s) => s.metrics?.() ?? []);
  }
}

/** Every worker's `Services.stats()` as one: per service, arrays concatenated and numbers summed. */
export function mergeServiceStats(perWorker: readonly (Record<string, Record<string, unknown>> | undefined)[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const worker of perWorker) {
    for (const [name, stats] of Object.entries(worker ?? {})) {
      const into = (out[name] ??= {});
      for (const [k, v] of Object.entries(stats)) {
        if (Array.isArray(v)) into[k] = [...((into[k] as unknown[] | undefined) ?? []), ...v];
        else if (typeof v === 'number') into[k] = ((into[k] as number | undefined) ?? 0) + v;
        else if (v !== null && typeof v === 'object') into[k] = mergeCounts(into[k] as Record<string, number> | undefined, v as Record<string, number>);
        else into[k] ??= v;
      }
    }
  }
  return out;
}

function mergeCounts(a: Record<string, number> | undefined, b: Record<string, number>): Record<string, number> {
  const out = { ...(a ?? {}) };
  for (const [k, n] of Object.entries(b)) if (typeof n === 'number') out[k] = (out[k] ?? 0) + n;
  return out;
}
