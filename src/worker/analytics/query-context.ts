/**
 * What every analysis of a project needs before it scans: the project's time zone and test-account filters, the
 * cohorts its filters and breakdowns name (with their definitions for the shards), and the person-id bound that
 * sizes person bitmaps. Built once per request by the coordinating worker.
 */
import { invalidInput } from '../../domain/analytics/errors.js';
import { isFilterGroup, leavesOf, parseFilters, type FilterGroup, type FilterNode } from '../../domain/analytics/property-filters.js';
import type { TrendsSqlOptions } from '../../domain/analytics/clickhouse/trends-sql.js';
import { STATIC_COHORT_PRINT_BOUND } from '../../domain/hogql/clickhouse-printer.js';
import type { Cohort, Project } from '../../domain/model.js';
import type { WorkerRuntime } from '../runtime.js';
import type { ScanContext } from './scatter.js';

export interface QueryContext {
  team: number;
  project: Project;
  timeZone: string;
  now: number;
  testAccountFilters: FilterGroup | null;
  scan: ScanContext;
  cohortNames: Map<number, string>;
  /** Part of every cache key: what else than the events decides an answer (settings, cohort versions). */
  fingerprint: string;
}

/** Cohort ids a tree refers to. */
function cohortIdsOf(node: FilterNode | null, out: Set<number>): Set<number> {
  for (const leaf of leavesOf(node)) if (leaf.type === 'cohort') out.add(leaf.value as number);
  return out;
}

export function queryContext(rt: WorkerRuntime, team: number, now: number, trees: (FilterNode | null)[], breakdownCohorts: number[] = []): QueryContext {
  rt.meta.env.resetReadTxn();
  const project = rt.meta.projects.get(team);
  if (!project) return invalidInput(null, 'Project not found.');
  const timeZone = project.timezone || 'UTC';
  const testAccountFilters = parseFilters(project.test_account_filters ?? null, 'filter_test_accounts');
  const all = new Map<number, Cohort>(rt.meta.cohortsOf(team).filter((c) => !c.deleted).map((c) => [c.id, c]));
  const wanted = new Set<number>();
  for (const t of [...trees, testAccountFilters]) cohortIdsOf(t, wanted);
  for (const id of breakdownCohorts) if (id !== 0) wanted.add(id);
  const cohorts: ScanContext['cohorts'] = [];
  const cohortNames = new Map<number, string>();
  const versions: string[] = [];
  // Cohorts refer to cohorts: take the closure, each once (a cycle just stops).
  const queue = [...wanted];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const c = all.get(id);
    if (!c) {
      if (wanted.has(id)) invalidInput('properties', `Cohort ${id} does not exist.`);
      continue;
    }
    cohortNames.set(id, c.name);
    versions.push(`${id}.${c.version}`);
    if (c.is_static) {
      cohorts.push([id, { kind: 'static', persons: rt.persons.staticCohortMembers(team, id) }]);
      continue;
    }
    const tree = parseFilters((c.filters as { properties?: unknown }).properties ?? null, 'properties');
    for (const ref of cohortIdsOf(tree, new Set())) queue.push(ref);
    cohorts.push([id, { kind: 'tree', tree: tree !== null && isFilterGroup(tree) ? asPersonTree(tree) : tree }]);
  }
  const scan: ScanContext = { team, now, timeZone, maxPersonId: rt.persons.maxPersonId(), cohorts };
  const fingerprint = JSON.stringify([timeZone, project.test_account_filters ?? null, versions]);
  return { team, project, timeZone, now, testAccountFilters, scan, cohortNames, fingerprint };
}

/** In a cohort definition an untyped filter is a person property filter. */
function asPersonTree(node: FilterNode): FilterNode {
  if (isFilterGroup(node)) return { and: node.and, children: node.children.map(asPersonTree) };
  return node.type === 'event' ? { ...node, type: 'person' } : node;
}

/**
 * What every query Quill prints for ClickHouse is printed with: the project, the export's database, where events'
 * current persons are looked up (the override table once the export is known to write it), the time zone and the
 * request's time.
 */
export function clickHouseSqlOptions(rt: WorkerRuntime, team: number, timeZone: string, now: number, ctx?: QueryContext): TrendsSqlOptions {
  const base = { team, database: rt.config.clickhouseDatabase, personLookup: rt.export?.personLookup(), timeZone, now };
  return ctx ? { ...base, cohorts: dynamicCohorts(ctx), staticCohorts: staticCohorts(rt, ctx) } : base;
}

/** The query's dynamic cohorts as trees, for the printer. */
function dynamicCohorts(ctx: QueryContext): ReadonlyMap<number, FilterNode | null> {
  const out = new Map<number, FilterNode | null>();
  for (const [id, c] of ctx.scan.cohorts) if (c.kind === 'tree') out.set(id, c.tree);
  return out;
}

/**
 * The query's static cohorts as their members' uuids (the persons events' person_id names on ClickHouse), or null
 * past the bound a query carries. Members merged away or deleted since have no row and match no event, as locally.
 */
function staticCohorts(rt: WorkerRuntime, ctx: QueryContext): ReadonlyMap<number, readonly string[] | null> {
  const out = new Map<number, readonly string[] | null>();
  for (const [id, c] of ctx.scan.cohorts) {
    if (c.kind !== 'static') continue;
    if (c.persons.length > STATIC_COHORT_PRINT_BOUND) {
      out.set(id, null);
      continue;
    }
    const uuids: string[] = [];
    for (const personId of c.persons) {
      const row = rt.persons.person(ctx.team, personId);
      if (row) uuids.push(row.uuid);
    }
    out.set(id, uuids);
  }
  return out;
}
