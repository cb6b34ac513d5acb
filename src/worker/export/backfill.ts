/**
 * The backfill: when the export is configured on a node that already holds events, each shard exports what it has
 * stored (its column blocks), while the log exporters export what arrives after, and no event is sent by both.
 *
 * The starting point is taken once per shard, in one write transaction of its events environment: every open block
 * is sealed, and the list of sealed blocks is stored with the shard's `appliedFrom` (how far it had applied each
 * source log) of that same transaction. The blocks hold exactly the events of the records up to those positions;
 * so each log exporter, the first time it starts, skips the events that an owner had applied up to its position
 * (`exportFilter`) and exports everything after. A fresh node takes the same steps with nothing to skip.
 *
 * The backfill then exports the listed blocks in parts of PART_ROWS events, each part an insert with its own
 * deduplication token and the progress stored after it, like the log exporters' batches. A block dropped by data
 * retention or rewritten by a person deletion meanwhile is skipped (counted in `skippedBlocks`): retention and
 * person deletion are repeated in ClickHouse anyway, and what a rewrite kept is skipped with it (a known gap).
 */
import { PERSONLESS_CREATED_AT_MS } from '../../domain/ingest/index.js';
import { shardOf } from '../../domain/shard-of.js';
import { eventsOfBlock, personPropertiesOfBlock, STATE_KEYS } from '../../stores/events/event-store.js';
import { transactDurably } from '../../stores/lmdb-env.js';
import type { PersonStore } from '../../stores/persons/person-store.js';
import { eventLine, eventRow, type EventActor, type EventRow } from '../../stores/clickhouse/rows.js';
import { COL } from '../../stores/scan/block-builder.js';
import { BatchPersons } from './batch-persons.js';
import { EXPORT_TABLES } from '../../stores/clickhouse/schema.js';
import type { ClickHouseSink } from '../../stores/clickhouse/sink.js';
import type { Shard } from '../ingest/shard.js';
import { BackgroundSlicer, type Foreground } from './background.js';

/** Events per insert of the backfill (a part of a block: its rows are encoded in one go by the client). */
const PART_ROWS = 1_024;
/** Rows built between two looks at the clock (the work yields every few milliseconds). */
const ROWS_PER_CLOCK_LOOK = 64;

export interface BackfillState {
  /** Per source shard (positionNumber): the events this shard applied from its log up to there are in `blocks`. */
  appliedFrom: Record<string, number>;
  /** The sealed blocks, [project, seq], to export. */
  blocks: [number, number][];
  /** Progress: the block and row the next part starts at. */
  block: number;
  row: number;
  events: number;
  skippedBlocks: number;
}

/** The shard's starting point and the backfill's progress from it (undefined: not taken yet). */
export function startingPointOf(shard: Shard): BackfillState | undefined {
  return shard.events.state.get(STATE_KEYS.exportBackfill) as BackfillState | undefined;
}

/** Takes the shard's starting point, once (the first time the export is configured). */
export async function takeStartingPoint(shard: Shard): Promise<BackfillState> {
  const state = shard.events.state;
  const existing = startingPointOf(shard);
  if (existing) return existing;
  try {
    return await shard.events.write(() => {
      shard.events.columns.sealOpenBlocks();
      const taken: BackfillState = {
        appliedFrom: { ...((state.get(STATE_KEYS.appliedFrom) as Record<string, number> | undefined) ?? {}) },
        blocks: shard.events.columns.sealedBlockKeys(),
        block: 0, row: 0, events: 0, skippedBlocks: 0,
      };
      state.put(STATE_KEYS.exportBackfill, taken);
      return taken;
    });
  } catch (error) {
    // The sealed blocks were not written: the open blocks in memory must match the durable records again.
    shard.events.columns.reloadOpen();
    throw error;
  }
}

/**
 * What the log exporter of source shard `source` skips: per owner shard, the position up to which that owner's
 * backfill holds its events of this log.
 */
export function filterFor(source: number, startingPoints: readonly Record<string, BackfillState['appliedFrom']>[]): Record<string, number> {
  const filter: Record<string, number> = {};
  for (const byOwner of startingPoints) {
    for (const [owner, appliedFrom] of Object.entries(byOwner)) {
      const position = appliedFrom[String(source)];
      if (position !== undefined) filter[owner] = position;
    }
  }
  return filter;
}

/** Whether a log exporter skips an event of a record ending at `end` (the owner's backfill has it). */
export function inBackfill(filter: Record<string, number> | null, team: number, distinctId: string, end: number, shardCount: number): boolean {
  if (filter === null) return false;
  const bound = filter[String(shardOf(team, distinctId, shardCount))];
  return bound !== undefined && end <= bound;
}

export class BackfillExporter {
  constructor(
    private readonly shard: Shard,
    private readonly persons: PersonStore,
    private readonly sink: ClickHouseSink,
    private readonly foreground: Foreground,
  ) {}

  progress(): BackfillState | undefined {
    return startingPointOf(this.shard);
  }

  get done(): boolean {
    const p = this.progress();
    return p === undefined || p.block >= p.blocks.length;
  }

  /** Exports the next part; null once everything listed is exported. */
  async step(): Promise<number | null> {
    const p = this.progress();
    if (!p || p.block >= p.blocks.length) return null;
    await this.sink.ensureSchema();
    const [team, seq] = p.blocks[p.block]!;
    const block = this.shard.events.columns.sealedBlock(team, seq);
    const next: BackfillState = { ...p };
    let rows: EventRow[] = [];
    if (!block) {
      next.block++;
      next.row = 0;
      next.skippedBlocks++;
    } else {
      const to = Math.min(block.n, p.row + PART_ROWS);
      rows = await this.rowsOf(team, block, p.row, to);
      await this.sink.insert(EXPORT_TABLES.events, rows, `quill-backfill-${this.shard.id}-${team}-${seq}-${p.row}-${to}`, new BackgroundSlicer(this.foreground), eventLine);
      if (to >= block.n) {
        next.block++;
        next.row = 0;
      } else next.row = to;
      next.events += rows.length;
    }
    await transactDurably(this.shard.events.env, () => this.shard.events.state.put(STATE_KEYS.exportBackfill, next));
    return rows.length;
  }

  private async rowsOf(team: number, block: Parameters<typeof eventsOfBlock>[1], from: number, to: number): Promise<EventRow[]> {
    const now = Date.now();
    const rows: EventRow[] = [];
    const slicer = new BackgroundSlicer(this.foreground);
    const people = new BatchPersons(this.persons);
    // Stored properties are the apply's: `$group_N` and the person-profile flag are as the log exporter sends them.
    // The person properties are each event's own, as the block keeps them for the local engine's analyses.
    const personProperties = personPropertiesOfBlock(block, from, to);
    // Who each event counts for, as the apply stored it: its personless actor (PostHog's person created_at), an older
    // Quill's "no person" (id 0), or the person its distinct id has now.
    const createdAt = block.f64(COL.personCreatedAt);
    let row = from;
    for (const e of eventsOfBlock(team, block, from, to)) {
      const personless = e.properties.$process_person_profile === false;
      const snapshot = JSON.stringify(personProperties.next().value);
      const actor: EventActor = e.person_id === null ? 'none'
        : createdAt?.[row] === PERSONLESS_CREATED_AT_MS ? 'personless' : people.of(team, e.distinct_id) ?? 'none';
      row++;
      rows.push(eventRow(team, { uuid: e.uuid, event: e.event, distinct_id: e.distinct_id, properties: e.properties, timestamp: e.timestamp, elements_chain: e.elements_chain },
        personless, actor, snapshot, e.ts, 0, now));
      if (rows.length % ROWS_PER_CLOCK_LOOK === 0 && slicer.due()) await slicer.pace();
    }
    return rows;
  }
}
