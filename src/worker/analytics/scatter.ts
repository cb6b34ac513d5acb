/**
 * Map-reduce of an analysis over every shard (design.md §4): the coordinating worker sends the same scan to every
 * worker (itself included); each runs it over the blocks of the shards it owns and answers one merged partial
 * state, which the coordinator merges again.
 *
 * A scan is long work on a thread that also owes acknowledgements and flag answers: it runs in slices
 * (src/worker/analytics/slices.ts).
 */
import { mergePartials, type Partial } from '../../domain/analytics/aggregates.js';
import { filterDateBound, propertyInstant } from '../../domain/analytics/property-date.js';
import type { FilterNode } from '../../domain/analytics/property-filters.js';
import type { PeerMessage } from '../peers.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import type { CohortFilter } from './block-filter.js';
import { PersonResolution } from './person-resolution.js';
import { Slicer } from './slices.js';
import { firstEventIn, scanBlock, type ScanEnv, type SeriesScan } from './series-scan.js';

export const ANALYTICS_SCAN = 'analytics.scan';
export const ANALYTICS_FIRST_EVENT = 'analytics.first_event';


/** What every shard needs to evaluate the filters of a query (plain data: it travels between threads). */
export interface ScanContext {
  team: number;
  now: number;
  timeZone: string;
  maxPersonId: number;
  /** Cohorts the filters or breakdowns refer to (static ones with their resolved person ids). */
  cohorts: [number, { kind: 'tree'; tree: FilterNode | null } | { kind: 'static'; persons: number[] }][];
}

interface ScanMessage extends PeerMessage {
  scan: SeriesScan;
  ctx: ScanContext;
}

/** Runs one series scan on every shard and merges the answers. */
export async function scanEverywhere(rt: WorkerRuntime, scan: SeriesScan, ctx: ScanContext): Promise<Partial> {
  const parts = await rt.peers.all<Partial>({ kind: ANALYTICS_SCAN, scan, ctx } satisfies ScanMessage);
  return parts.reduce((a, b) => mergePartials(a, b), new Map());
}

export function scanEnvOf(rt: WorkerRuntime, ctx: ScanContext): ScanEnv {
  const groups = new Map<string, Readonly<Record<string, unknown>> | undefined>();
  const cohorts = new Map<number, CohortFilter>(
    ctx.cohorts.map(([id, c]) => [id, c.kind === 'static' ? { kind: 'static', persons: new Set(c.persons) } : c]),
  );
  const resolution = PersonResolution.of(rt.persons, ctx.team, ctx.maxPersonId);
  return {
    cohorts,
    resolution,
    maxPersonId: ctx.maxPersonId,
    groupProperties(typeIndex, key) {
      const id = `${typeIndex}\u0000${key}`;
      if (!groups.has(id)) groups.set(id, rt.persons.group(ctx.team, typeIndex, key)?.properties);
      return groups.get(id);
    },
    resolvedPersons: (block) => resolution.resolveAll(block.u32('person_id')!),
    dateOfFilter: (value) => filterDateBound(value, ctx.now, ctx.timeZone),
    dateOfValue: (value) => propertyInstant(value, ctx.timeZone),
  };
}

export const scanHandler: PeerHandler = async (rt, msg) => {
  const { scan, ctx } = msg as ScanMessage;
  // Persons are written by every thread: read the newest merges and groups, not this thread's old snapshot.
  rt.persons.env.resetReadTxn();
  const env = scanEnvOf(rt, ctx);
  const out: Partial = new Map();
  const slicer = new Slicer();
  for (const shard of rt.ingest.shards.values()) {
    for (const block of shard.events.columns.blocks(scan.team, scan.from, scan.to)) {
      scanBlock(block, scan, env, out);
      await slicer.pace();
    }
  }
  return out;
};

/** `date_from=all`: the project's first event after 2015-01-01 (older timestamps are clock errors). */
export async function firstEvent(rt: WorkerRuntime, team: number): Promise<number | null> {
  const firsts = await rt.peers.all<number | null>({ kind: ANALYTICS_FIRST_EVENT, team });
  const found = firsts.filter((t): t is number => t !== null);
  return found.length === 0 ? null : Math.min(...found);
}

/** The first event when a query's range is `date_from=all` (where its range starts), else null (not needed). */
export async function firstEventIfAll(rt: WorkerRuntime, team: number, dates: { dateFrom: string | null }): Promise<number | null> {
  return dates.dateFrom === 'all' ? firstEvent(rt, team) : null;
}

const AFTER_2015 = Date.UTC(2015, 0, 1);

export const firstEventHandler: PeerHandler = async (rt, msg) => {
  const team = (msg as PeerMessage & { team: number }).team;
  let best: number | null = null;
  for (const shard of rt.ingest.shards.values()) {
    const t = firstEventIn(shard.events.columns.blocks(team), AFTER_2015);
    if (t !== null && (best === null || t < best)) best = t;
  }
  return best;
};
