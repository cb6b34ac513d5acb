/** The ClickHouse export's progress as `/_stats` shows it, and a wait until everything acknowledged is exported. */
import { PERSONAL_KEY } from './paths.js';

export interface ExportStats {
  shards: { lagEvents: number; rows: number; failures: number; error: string | null }[];
  persons: { lagChanges: number; rows: number } | null;
}

export async function exportStats(base: string): Promise<ExportStats> {
  const res = await fetch(`${base}/_stats`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } });
  const body = (await res.json()) as { export: ExportStats };
  return body.export;
}

/** Waits until every event and person change is in ClickHouse; throws after `timeoutMs`. Answers the last stats. */
export async function exportCaughtUp(base: string, timeoutMs: number): Promise<ExportStats> {
  const started = performance.now();
  let stats = await exportStats(base);
  while (stats.shards.some((s) => s.lagEvents > 0) || (stats.persons?.lagChanges ?? 0) > 0) {
    if (performance.now() - started > timeoutMs) throw new Error(`the export did not catch up within ${Math.round(timeoutMs / 60_000)} minutes`);
    await new Promise((r) => setTimeout(r, 250));
    stats = await exportStats(base);
  }
  return stats;
}
