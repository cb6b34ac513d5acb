/**
 * Health: per shard, the ingestion rate, the backlog (acknowledged, not yet applied) and the ingest log's fsync
 * latency, from `/_stats` every 2 seconds, as charts that grow as samples arrive (the last 5 minutes).
 * Organization owners only (the endpoint says so for others). Loaded as its own chunk.
 */
import { useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { TimeSeriesChart } from '../components/time-series-chart';
import { ErrorNote, Page } from '../components/ui';
import { bytesText, numberText, shortNumber } from '../lib/format';
import { useInterval } from '../lib/hooks';

interface ShardStats {
  shard: number;
  backlog: number;
  lagMs: number;
  appendedEvents: number;
  appliedEvents: number;
  log: { syncs: number; syncMs: number; syncMaxMs: number; bytes: number };
}
interface Sample {
  t: number;
  shards: ShardStats[];
}

const EVERY_MS = 2000;
/** A legend value, and an axis label, with its unit. */
const unit = (what: string) => (v: number) => `${numberText(v)} ${what}`;
const axisUnit = (what: string) => (v: number) => `${shortNumber(v)}${what}`;
const KEEP = 150;
const APPENDED_HINT = 'Events written to this shard\'s log (and acknowledged) since this start: the events of the requests this shard received.';
const APPLIED_HINT = 'Events this shard stored since this start: those of the persons it owns, whichever shard received them.';

/** The shards' counts added up: appended events are applied by the shard owning their person, so only totals compare. */
export function shardTotals(shards: readonly Pick<ShardStats, 'appendedEvents' | 'appliedEvents' | 'backlog'>[]) {
  return shards.reduce((t, s) => ({ appended: t.appended + s.appendedEvents, applied: t.applied + s.appliedEvents, backlog: t.backlog + s.backlog }), { appended: 0, applied: 0, backlog: 0 });
}

/** Per-shard series between consecutive samples: events/s appended and applied, backlog, mean fsync ms. */
export function healthSeries(samples: Sample[]) {
  const x: number[] = [];
  const shards = samples[0]?.shards.map((s) => s.shard) ?? [];
  const rate = shards.map(() => [] as number[]);
  const applied = shards.map(() => [] as number[]);
  const backlog = shards.map(() => [] as number[]);
  const fsync = shards.map(() => [] as (number | null)[]);
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    const dt = (b.t - a.t) / 1000;
    x.push(b.t / 1000);
    shards.forEach((_, k) => {
      const sa = a.shards[k]!;
      const sb = b.shards[k]!;
      rate[k]!.push(Math.max(0, (sb.appendedEvents - sa.appendedEvents) / dt));
      applied[k]!.push(Math.max(0, (sb.appliedEvents - sa.appliedEvents) / dt));
      backlog[k]!.push(sb.backlog);
      const syncs = sb.log.syncs - sa.log.syncs;
      fsync[k]!.push(syncs > 0 ? (sb.log.syncMs - sa.log.syncMs) / syncs : null);
    });
  }
  return { x, shards, rate, applied, backlog, fsync };
}

export function HealthPage() {
  const samples = useRef<Sample[]>([]);
  const [, setVersion] = useState(0);
  const [error, setError] = useState<Error | null>(null);
  useInterval(async () => {
    try {
      const stats = await api.get<{ shards: ShardStats[] }>('/_stats');
      samples.current = [...samples.current, { t: Date.now(), shards: stats.shards }].slice(-KEEP);
      setError(null);
      setVersion((v) => v + 1);
    } catch (err) {
      setError(err as Error);
    }
  }, EVERY_MS, []);
  const last = samples.current[samples.current.length - 1];
  const totals = shardTotals(last?.shards ?? []);
  const h = healthSeries(samples.current);
  const named = (values: (number | null)[][], what: string) => values.map((data, k) => ({ label: `shard ${h.shards[k]} ${what}`, data }));
  return (
    <Page title="Health" testId="health-page">
      <ErrorNote error={error} />
      {last && (
        <table class="list" data-testid="shard-table">
          <thead><tr><th>Shard</th><th title={APPENDED_HINT}>Appended</th><th title={APPLIED_HINT}>Applied</th><th>Backlog</th><th>Lag</th><th>fsyncs</th><th>Longest fsync</th><th>Log size</th></tr></thead>
          <tbody>
            {last.shards.map((s) => (
              <tr key={s.shard}>
                <td>{s.shard}</td><td>{numberText(s.appendedEvents)}</td><td>{numberText(s.appliedEvents)}</td><td>{numberText(s.backlog)}</td><td>{numberText(s.lagMs)} ms</td>
                <td>{numberText(s.log.syncs)}</td><td>{numberText(s.log.syncMaxMs)} ms</td><td title={`${s.log.bytes} bytes`}>{bytesText(s.log.bytes)}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr data-testid="shard-totals">
              <th>All</th><td>{numberText(totals.appended)}</td><td>{numberText(totals.applied)}</td><td>{numberText(totals.backlog)}</td><td colSpan={4} />
            </tr>
          </tfoot>
        </table>
      )}
      {last && last.shards.length > 1 && (
        <p class="muted" data-testid="shard-table-note">
          Appended and Applied differ per shard: a shard appends the events of the requests it receives, and each event
          is applied (stored) by the shard that owns its person. Compare the totals: what was appended is applied or
          still in the backlog, apart from duplicates and events set aside (counted in /_stats). Counts are since this
          start.
        </p>
      )}
      {h.x.length < 2 ? <p class="muted">Collecting samples…</p> : (
        <div class="tiles">
          <article class="tile card"><h3>Events per second (appended, applied)</h3>
            <TimeSeriesChart testId="health-rate" time x={h.x} labels={[]} display="line" height={200} valueText={unit('events/s')} axisText={axisUnit('/s')}
              series={[...named(h.rate, 'appended'), ...named(h.applied, 'applied')]} /></article>
          <article class="tile card"><h3>Backlog (events)</h3>
            <TimeSeriesChart testId="health-backlog" time x={h.x} labels={[]} display="line" height={200} valueText={unit('events')} series={named(h.backlog, 'backlog')} /></article>
          <article class="tile card"><h3>Mean fsync latency (ms)</h3>
            <TimeSeriesChart testId="health-fsync" time x={h.x} labels={[]} display="line" height={200} valueText={unit('ms')} axisText={axisUnit(' ms')} series={named(h.fsync, 'fsync')} /></article>
        </div>
      )}
    </Page>
  );
}
