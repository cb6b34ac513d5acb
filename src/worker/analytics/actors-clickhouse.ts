/**
 * The persons of a point answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): ClickHouse says which persons (their
 * uuids, and a value when the point has one), the local persons store says who they are. The page itself is made
 * by the same code as the local engine's (actorPage, src/worker/analytics/actors.ts), over the same local person
 * ids, so both executors list the same persons in the same order, with the same search, pages and `next`: the
 * order's tie-break is the local person id, which ClickHouse does not know, hence the ids are looked up here rather
 * than the page being cut in SQL.
 */
import type { PrintedClickHouse } from '../../domain/hogql/clickhouse-printer.js';
import { selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { AnsweredLocally } from './executor-choice.js';

/** Persons a point brings back from ClickHouse at most (one row each); past it the local engine answers. */
export const ACTOR_ROWS_MAX = 2_000_000;

/**
 * The local person id of a person ClickHouse names by uuid: a person's, or a personless actor's (the deterministic
 * uuid of a distinct id whose events came without a profile; src/domain/ingest/personless.ts), which has no row and
 * is left out of the page as the local engine leaves it out. A uuid the persons store does not know is a person
 * deleted since its events (a merged-away person is never named: ClickHouse follows the merge, as the local engine
 * does): the local engine still counts it, under an id ClickHouse cannot know, and ranks it by that id among the
 * others, so the local engine answers instead.
 */
export function localPersonIdOf(rt: WorkerRuntime, team: number): (uuid: string) => number {
  rt.persons.env.resetReadTxn();
  const known = new Map<string, number>();
  return (uuid) => {
    let id = known.get(uuid);
    if (id === undefined) {
      id = rt.persons.idOfUuid(team, uuid);
      if (id === undefined) throw new AnsweredLocally('a person of this point was deleted since: only the local engine knows its place among the others');
      known.set(uuid, id);
    }
    return id;
  };
}

/** The local person id of a gathered person, by the number foldGatheredRows gave it (`uuids[pid - 1]`). */
export function gatheredLocalId(rt: WorkerRuntime, team: number, uuids: readonly string[]): (pid: number) => number {
  const localId = localPersonIdOf(rt, team);
  return (pid) => localId(uuids[pid - 1]!);
}

/**
 * Rows whose first column is a person's uuid (and the second, if any, its value at the point) as local person id →
 * value (null without a value column), the input of actorPage.
 */
export async function actorValuesOnClickHouse(rt: WorkerRuntime, team: number, printed: PrintedClickHouse): Promise<Map<number, number | null>> {
  const rows = (await selectOnClickHouse(rt, printed.sql, printed.params, ACTOR_ROWS_MAX)).data;
  const localId = localPersonIdOf(rt, team);
  const values = new Map<number, number | null>();
  for (const row of rows) values.set(localId(String(row[0])), row.length > 1 ? Number(row[1]) : null);
  return values;
}
