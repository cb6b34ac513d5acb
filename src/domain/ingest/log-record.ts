/**
 * What the ingest log holds for one capture request, and how the events are read back out of it.
 *
 * A record is the request as the SDK sent it (the JSON text the body decoded to) plus what normalisation took
 * from the request rather than the body: the receive time, `sent_at`, the IP, the `/engage/` flag, and the uuids
 * the server generated. Normalisation is a pure function of those (src/domain/ingest/normalize-event.ts), so the
 * shard that applies an event normalises it again and gets the event that was acknowledged. This is PostHog's own
 * split — capture puts the raw event and the request's facts on Kafka, processing normalises behind it — and it
 * spares the acknowledgement path a JSON.stringify of every normalised event (measured: 169 µs for 100 events of
 * ~430 bytes, a fifth of a worker's time under `/batch/` load).
 *
 * Layout (UTF-8): one header line of JSON `{"v":2,"t":project,"c":context,"u":uuids}`, a newline, the body text.
 * `u` has one entry per raw event of the body (eventsOf order): null for an event normalisation skipped, 0 for
 * one that kept its client uuid, else the uuid generated for it. Records of the first format (`{"t":…,"e":[…]}`,
 * normalised events) are still read, so a log written before this format replays.
 */
import { eventsOf } from './events-of.js';
import { normalizeEvent, rawDistinctId } from './normalize-event.js';
import type { NormalizeContext, NormalizedEvent } from './types.js';

/** Per raw event: skipped (null), client uuid kept (0), or the generated uuid. */
export type RecordUuid = string | 0 | null;

const HEADER_PREFIX = '{"v":2,';
const NEWLINE = 0x0a;

export function encodeLogRecord(team: number, ctx: NormalizeContext, uuids: readonly RecordUuid[], bodyText: string): Buffer {
  const header = `${HEADER_PREFIX}"t":${team},"c":${JSON.stringify(ctx)},"u":${JSON.stringify(uuids)}}\n`;
  return Buffer.from(header + bodyText, 'utf8');
}

/** How the receiver records each normalisation outcome for `encodeLogRecord`. */
export function recordUuid(event: NormalizedEvent | null, raw: unknown): RecordUuid {
  if (event === null) return null;
  const client = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>)['uuid'] : undefined;
  return typeof client === 'string' && client.toLowerCase() === event.uuid ? 0 : event.uuid;
}

/**
 * The project and the events of a record, normalised exactly as when it was acknowledged, and when it was received
 * (NaN for records of the first format). With `keep`, only the
 * events whose distinct id it accepts (a shard takes its own): the others are not normalised at all.
 */
export function decodeLogRecord(
  payload: Uint8Array,
  keep?: (team: number, distinctId: string) => boolean,
): { team: number; events: NormalizedEvent[]; receivedAt: number } {
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (bytes.toString('latin1', 0, HEADER_PREFIX.length) !== HEADER_PREFIX) {
    const { t, e } = JSON.parse(bytes.toString('utf8')) as { t: number; e: NormalizedEvent[] };
    return { team: t, events: keep ? e.filter((event) => keep(t, event.distinct_id)) : e, receivedAt: NaN };
  }
  const newline = bytes.indexOf(NEWLINE);
  const header = JSON.parse(bytes.toString('utf8', 0, newline)) as { t: number; c: NormalizeContext; u: RecordUuid[] };
  const raws = eventsOf(JSON.parse(bytes.toString('utf8', newline + 1)));
  const events: NormalizedEvent[] = [];
  for (let i = 0; i < raws.length; i++) {
    const uuid = header.u[i];
    if (uuid === null || uuid === undefined) continue;
    if (keep && !keep(header.t, rawDistinctId(raws[i])!)) continue;
    const outcome = normalizeEvent(raws[i], header.c);
    // Cannot fail for an event that normalised when it was logged (same input, same function); guard anyway.
    if (!outcome.ok) continue;
    if (uuid !== 0) outcome.event.uuid = uuid;
    events.push(outcome.event);
  }
  return { team: header.t, events, receivedAt: header.c.now };
}
