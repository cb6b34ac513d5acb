/**
 * One person's events over every shard, with the person's properties as they were at each event (the `pp:`
 * columns): what the properties timeline reads. A scan by person is a full scan of the project's blocks in the
 * range; it is filtered on the person column before anything else is decoded.
 */
import type { TimelineEvent } from '../../domain/analytics/properties-timeline.js';
import { COL, PERSON_PROP } from '../../stores/scan/block-builder.js';
import { propertiesReader } from '../../stores/scan/row-properties.js';
import type { PeerMessage } from '../peers.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import { scanEnvOf, type ScanContext } from './scatter.js';
import { Slicer } from './slices.js';

export const PERSON_EVENTS = 'analytics.person_events';

interface PersonEventsMessage extends PeerMessage {
  ctx: ScanContext;
  person: number;
  /** Event names to keep; null = every event. */
  events: string[] | null;
  from: number;
  to: number;
}

export const personEventsHandler: PeerHandler = async (rt, msg) => {
  const m = msg as PersonEventsMessage;
  rt.persons.env.resetReadTxn();
  const env = scanEnvOf(rt, m.ctx);
  const out: TimelineEvent[] = [];
  const slicer = new Slicer();
  for (const shard of rt.ingest.shards.values()) {
    for (const block of shard.events.columns.blocks(m.ctx.team, m.from, m.to)) {
      const persons = env.resolution.resolveAll(block.u32(COL.personId)!);
      const ts = block.f64(COL.ts)!;
      const names = block.dict(COL.event);
      const wanted = m.events === null ? null : new Set(m.events.map((e) => (names ? names.values.indexOf(e) + 1 : 0)).filter((c) => c > 0));
      let properties: ((row: number) => Record<string, unknown>) | null = null;
      for (let i = 0; i < block.n; i++) {
        if (persons[i] !== m.person || ts[i]! < m.from || ts[i]! > m.to) continue;
        if (wanted !== null && !wanted.has(names!.codes[i]!)) continue;
        properties ??= propertiesReader(block, PERSON_PROP);
        out.push({ ts: ts[i]!, properties: properties(i) });
      }
      await slicer.pace();
    }
  }
  return out;
};

export async function personEvents(rt: WorkerRuntime, ctx: ScanContext, person: number, events: string[] | null, from: number, to: number): Promise<TimelineEvent[]> {
  const parts = await rt.peers.all<TimelineEvent[]>({ kind: PERSON_EVENTS, ctx, person, events, from, to } satisfies PersonEventsMessage);
  return parts.flat().sort((a, b) => a.ts - b.ts);
}
