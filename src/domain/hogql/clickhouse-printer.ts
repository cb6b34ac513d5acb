/**
 * From a parsed HogQL query (src/domain/hogql/ast.ts) to ClickHouse SQL over the export's tables
 * (src/stores/clickhouse/schema.ts), for `QUILL_ANALYTICS=clickhouse`. Pure: text and parameter values out.
 *
 * The team guard is structural, not a condition added here and there: the only place this module names a stored
 * table is `guarded()`, which reads it as `(SELECT … FROM db.table AS raw WHERE raw.team_id = <team> …)`. Every
 * table reference of the query — FROM, JOIN, subquery, CTE (inlined at each use), UNION branch, `IN (SELECT …)`,
 * scalar subquery — is printed as such a subquery of the virtual table it names, so no printed SQL reads a row of
 * another team whatever the query's shape. Names that are not Quill's tables or the query's own CTEs are refused,
 * so nothing falls through to a table of ClickHouse's default database.
 *
 * User text never becomes SQL text: string literals (and JSON keys, placeholder values) are query parameters
 * (`{p0:String}`); identifiers are backquoted with their quotes escaped; numbers are printed from finite JS numbers.
 * Functions are only those of Quill's own table (src/domain/hogql/functions.ts, aggregate-functions.ts); table
 * functions, SETTINGS and statements other than SELECT never reach here (the parser refuses them) and would be
 * refused again here (unknown tables and functions).
 *
 * Quill's HogQL semantics kept on ClickHouse:
 *   - property values keep their JSON type: `properties.k` is the raw JSON of the value (null when missing or
 *     JSON null), read as text next to a string, as a number next to a number or in numeric aggregates;
 *   - `person_id` is the person the event counts for now (the distinct id's latest row of person_distinct_id2,
 *     argMax by version), `person.properties.k` the person as it was right after the event (person_properties:
 *     the export writes the snapshot the event was applied with, the one the local engine reads);
 *   - timestamps are in the project's time zone (`toTimeZone`), string times parsed in it;
 *   - `uniq` is exact, `sum`/`avg`/`min`/`max` of no values are NULL, a LEFT JOIN's missing side is NULL
 *     (`join_use_nulls`, a setting the executor sends).
 */
import { compileMatcher, isFilterGroup, parseFilters, type FilterGroup, type FilterLeaf, type FilterNode } from '../analytics/property-filters.js';
import { elementConditionGap, elementConditionSql } from '../analytics/clickhouse/element-conditions-sql.js';
import { propertyInstantSql } from '../analytics/clickhouse/property-date-sql.js';
import { filterDateBound } from '../analytics/property-date.js';
import { aggregateOf } from './aggregate-functions.js';
import type { Expr, OrderItem, Query, Select, TableRef } from './ast.js';
import { hogqlError, NotPrintable } from './errors.js';
import { filtersDateBound } from './filters-date.js';
import { FUNCTIONS, REFUSED_FUNCTIONS, scalarFunction } from './functions.js';
import type { ColumnInfo } from './plan.js';

export interface ClickHousePrintOptions {
  team: number;
  /** The export's database (QUILL_CLICKHOUSE_DATABASE, an identifier). */
  database: string;
  timeZone: string;
  /** The request's time, epoch ms (`now()`). */
  now: number;
  /** Placeholder values (`{name}`): the request's `values` and `variables`. */
  values: Record<string, unknown>;
  /** The request's `filters` (what `{filters}` stands for) and the project's test-account filters. */
  filters?: Record<string, unknown> | null;
  testAccountFilters?: FilterGroup | null;
  /**
   * A filter tree `{filters}` also keeps (AND): how Quill's own analyses (src/domain/analytics/clickhouse/) pass
   * the filters they already parsed, printed by the same code as the request's.
   */
  filterTree?: FilterNode | null;
  /**
   * Named filter trees (`{name}` stands for one, over the SELECT's events): an analysis whose query filters two
   * sets of events differently (retention's target and returning events) passes each under its own name.
   */
  filterTrees?: Readonly<Record<string, FilterNode | null>>;
  /**
   * Where an event's current person is looked up: PostHog's small `person_distinct_id_overrides` (only the distinct
   * ids whose events may carry another person than their own; complete when the export wrote it from the database's
   * start) or every distinct id's `person_distinct_id2` (the default). Joining 640,000 distinct ids cost 3-4 s of a
   * funnel over 10M events.
   */
  personLookup?: 'overrides' | 'every_distinct_id';
  /**
   * The dynamic cohorts an analysis's filters may name (closure included), each as its tree of person property
   * filters: the local engine matches a cohort leaf by the person's properties at the event (the snapshot the
   * export writes as person_properties), so the tree printed in its place answers alike. A cohort not here (a
   * static one: a list of persons) is answered by the local engine.
   */
  cohorts?: ReadonlyMap<number, FilterNode | null>;
  /**
   * The static cohorts they may name: each one's members as person uuids (what events' `person_id` holds), read
   * from the person store when the query is made, so always current; null for a cohort past the bound of persons a
   * query carries (STATIC_COHORT_PRINT_BOUND), which the local engine answers.
   */
  staticCohorts?: ReadonlyMap<number, readonly string[] | null>;
}

/**
 * The most persons of a static cohort a query carries as its list (one text parameter, about 37 bytes a person,
 * sent in the request's URL: ClickHouse's http_max_uri_size is 1 MiB by default). A larger cohort falls back.
 */
export const STATIC_COHORT_PRINT_BOUND = 10_000;

export interface PrintedClickHouse {
  sql: string;
  /** Query parameters: `{p0:String}` in the text is `params.p0`. */
  params: Record<string, string>;
}

/** The tables a HogQL query may name, and the stored table behind each. */
export const VIRTUAL_TABLES = { events: 'events', persons: 'person', person_distinct_ids: 'person_distinct_id2', groups: 'groups' } as const;

/** ClickHouse's table functions: named in the refusal when a query tries one as a table or a function. */
export const TABLE_FUNCTIONS = new Set([
  'url', 'file', 'remote', 'remotesecure', 's3', 's3cluster', 'input', 'mysql', 'postgresql', 'jdbc', 'odbc', 'hdfs', 'hdfscluster',
  'cluster', 'clusterallreplicas', 'merge', 'numbers', 'numbers_mt', 'zeros', 'generaterandom', 'values', 'view', 'dictionary',
  'executable', 'azureblobstorage', 'gcs', 'mongodb', 'redis', 'sqlite', 'iceberg', 'deltalake', 'hudi', 'urlcluster', 'null', 'format',
]);

/** What an expression yields, as far as the printer must know to coerce it. */
type T = 'json' | 'string' | 'number' | 'bool' | 'datetime' | 'date' | 'uuid' | 'null' | 'any';

interface Printed {
  sql: string;
  t: T;
}

type SourceKind = 'events' | 'persons' | 'pdi' | 'groups' | 'sub';

interface Source {
  kind: SourceKind;
  /** The alias it has in the printed SQL (the user's, or the table name). */
  alias: string;
  /** Output columns of a subquery, with what they yield. */
  columns: Map<string, T>;
  /** Events: the stand-in of its subquery in the FROM until the query is printed, and whether it reads person_id. */
  marker?: string;
  readsPersonId?: boolean;
  /** Events: the group types whose current group rows the query reads (`group_0.properties.name`). */
  groups?: Set<number>;
}

interface Scope {
  sources: Map<string, Source>;
  /** In FROM-then-JOIN order: unqualified names resolve against the first that has them. */
  order: Source[];
  aliases: Map<string, T>;
  ctes: Map<string, Query>;
}

const COLUMN_TYPES: Record<Exclude<SourceKind, 'sub'>, Record<string, T>> = {
  events: {
    uuid: 'uuid', event: 'string', timestamp: 'datetime', distinct_id: 'string', elements_chain: 'string', person_id: 'uuid',
    properties: 'string', $session_id: 'string', $window_id: 'string', team_id: 'number',
    $group_0: 'string', $group_1: 'string', $group_2: 'string', $group_3: 'string', $group_4: 'string',
  },
  persons: { id: 'uuid', created_at: 'datetime', properties: 'string', is_identified: 'bool', team_id: 'number' },
  pdi: { distinct_id: 'string', person_id: 'uuid', team_id: 'number' },
  groups: { index: 'number', key: 'string', created_at: 'datetime', properties: 'string', team_id: 'number' },
};

/** What `*` stands for on each table (as src/domain/hogql/planner.ts lists them). */
const STAR_COLUMNS: Record<Exclude<SourceKind, 'sub'>, string[]> = {
  events: ['event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'person_id'],
  persons: ['id', 'created_at', 'properties', 'is_identified'],
  pdi: ['distinct_id', 'person_id'],
  groups: ['index', 'key', 'created_at', 'properties'],
};

const COMPARISONS = new Set(['equals', 'notEquals', 'less', 'greater', 'lessOrEquals', 'greaterOrEquals']);
const STRING_ARGS = new Set([
  'like', 'ilike', 'notLike', 'notILike', 'match', 'lower', 'upper', 'lowerUTF8', 'upperUTF8', 'length', 'lengthUTF8', 'empty', 'notEmpty',
  'concat', 'substring', 'trim', 'trimBoth', 'trimLeft', 'trimRight', 'reverse', 'replaceAll', 'replaceOne', 'replaceRegexpAll',
  'replaceRegexpOne', 'startsWith', 'endsWith', 'position', 'positionCaseInsensitive', 'extract', 'splitByChar', 'splitByString',
  'leftPad', 'rightPad', 'domain', 'path', 'JSONExtractString', 'JSONExtractRaw', 'JSONExtractFloat', 'JSONExtractInt', 'JSONExtractBool', 'JSONHas',
]);
const NUMERIC_ARGS = new Set(['plus', 'minus', 'multiply', 'divide', 'intDiv', 'modulo', 'negate', 'abs', 'floor', 'ceil', 'round', 'sqrt', 'exp', 'log', 'log2', 'log10', 'pow', 'sign', 'greatest', 'least']);
const NUMERIC_RESULT = new Set([...NUMERIC_ARGS, 'length', 'lengthUTF8', 'position', 'positionCaseInsensitive', 'toYear', 'toQuarter', 'toMonth', 'toDayOfMonth',
  'toDayOfWeek', 'toDayOfYear', 'toHour', 'toMinute', 'toSecond', 'toYYYYMM', 'toYYYYMMDD', 'toUnixTimestamp', 'dateDiff']);
const DATETIME_RESULT = new Set(['toStartOfMinute', 'toStartOfHour', 'toStartOfDay', 'toStartOfInterval', 'dateTrunc', 'dateAdd', 'dateSub', 'fromUnixTimestamp']);
const DATE_RESULT = new Set(['toStartOfWeek', 'toMonday', 'toStartOfMonth', 'toStartOfQuarter', 'toStartOfYear']);
const BOOL_RESULT = new Set([...COMPARISONS, 'like', 'ilike', 'notLike', 'notILike', 'match', 'and', 'or', 'not', 'xor', 'isNull', 'isNotNull', 'in', 'notIn',
  'empty', 'notEmpty', 'startsWith', 'endsWith', 'has', 'JSONHas', 'toBool']);

/** A backquoted identifier (a name of the query, never a table of ClickHouse: tables come from `guarded()` only). */
export function chIdentifier(name: string): string {
  // Control characters have no use in a name (and the printer's own stand-ins are made of them).
  if (/[\u0000-\u001f]/.test(name)) hogqlError('A name with control characters cannot be used in a query.');
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

function numberText(n: number): string {
  if (!Number.isFinite(n)) hogqlError(`The number ${n} cannot be used in a query.`);
  return String(n);
}

export function printClickHouse(q: Query, columns: readonly ColumnInfo[], opts: ClickHousePrintOptions): PrintedClickHouse {
  return new ClickHousePrinter(opts).top(q, columns);
}

class ClickHousePrinter {
  private readonly params: Record<string, string> = {};
  private paramCount = 0;
  /** The cohorts being printed, innermost last (a cohort that names itself back is not printed). */
  private readonly cohortsPrinting = new Set<number>();
  private subCount = 0;
  /** The CTEs being printed inline (one that reaches itself again is recursive). */
  private readonly expanding = new Set<Query>();
  private readonly team: string;
  private readonly db: string;
  private readonly tz: string;

  constructor(private readonly opts: ClickHousePrintOptions) {
    if (!Number.isSafeInteger(opts.team)) throw new Error('internal: the team id must be an integer');
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(opts.database)) throw new Error('internal: the ClickHouse database must be an identifier');
    this.team = String(opts.team);
    this.db = opts.database;
    // The project's time zone is Quill's own validated setting; as a parameter it is a constant all the same.
    this.tz = this.param(opts.timeZone);
  }

  /** The whole query, its columns converted to what the answer's rows need (src/worker/query/clickhouse-rows.ts). */
  top(q: Query, columns: readonly ColumnInfo[]): PrintedClickHouse {
    const names: string[] = [];
    const inner = this.query(q, new Map(), names);
    const outer = names.map((name, i) => `${outputColumn(chIdentifier(name), columns[i]?.type)} AS ${chIdentifier(`c${i}`)}`);
    return { sql: `SELECT ${outer.join(', ')} FROM (${inner.sql}) AS ${chIdentifier('__result')}`, params: this.params };
  }

  private param(value: string): string {
    const name = `p${this.paramCount++}`;
    this.params[name] = value;
    return `{${name}:String}`;
  }

  // ---- queries

  /** A query; `names`, when given, receives the output names of its columns (top-level columns get `__cN` aliases). */
  private query(q: Query, ctes: Map<string, Query>, names?: string[]): { sql: string; columns: Map<string, T>; types: T[] } {
    if (q.k === 'union') {
      const parts = q.selects.map((s, i) => this.query(s, ctes, i === 0 ? names : undefined));
      return { sql: parts.map((p) => p.sql).join(' UNION ALL '), columns: parts[0]!.columns, types: parts[0]!.types };
    }
    return this.select(q, ctes, names);
  }

  private select(q: Select, outerCtes: Map<string, Query>, names?: string[]): { sql: string; columns: Map<string, T>; types: T[] } {
    const ctes = new Map(outerCtes);
    for (const c of q.ctes) ctes.set(c.name, c.query);
    const scope: Scope = { sources: new Map(), order: [], aliases: new Map(), ctes };
    const parts: string[] = [];
    let from = '';
    if (q.from) {
      from = ` FROM ${this.ref(q.from, scope)}`;
      for (const j of q.joins) {
        if (j.kind === 'RIGHT' || j.kind === 'FULL') hogqlError(`${j.kind} JOIN is not supported by Quill's HogQL.`);
        const ref = this.ref(j.ref, scope);
        from += ` ${j.kind} JOIN ${ref}${j.on ? ` ON ${this.bool(j.on, scope)}` : ''}`;
      }
    }
    const outColumns = new Map<string, T>();
    const types: T[] = [];
    const cols = q.columns.flatMap((c, i) => {
      if (c.k === 'star') {
        return this.star(c.table, scope).map(({ name, p }) => {
          outColumns.set(name, p.t);
          types.push(p.t);
          names?.push(name);
          return `${p.sql} AS ${chIdentifier(name)}`;
        });
      }
      const p = this.expr(c.k === 'alias' ? c.expr : c, scope);
      types.push(p.t);
      let name = c.k === 'alias' ? c.alias : c.k === 'field' ? c.chain[c.chain.length - 1]! : null;
      if (c.k === 'alias') scope.aliases.set(c.alias, p.t);
      if (names) {
        name = c.k === 'alias' ? c.alias : `__c${i}`;
        names.push(name);
      }
      if (name !== null) outColumns.set(name, p.t);
      return [name !== null && (c.k === 'alias' || names) ? `${p.sql} AS ${chIdentifier(name)}` : p.sql];
    });
    parts.push(`SELECT ${q.distinct ? 'DISTINCT ' : ''}${cols.join(', ')}${from}`);
    if (q.where) parts.push(`WHERE ${this.bool(q.where, scope)}`);
    if (q.groupBy.length > 0) parts.push(`GROUP BY ${q.groupBy.map((g) => this.groupKey(g, q, scope)).join(', ')}`);
    if (q.having) parts.push(`HAVING ${this.bool(q.having, scope)}`);
    if (q.orderBy.length > 0) parts.push(`ORDER BY ${q.orderBy.map((o) => this.order(o, q, scope)).join(', ')}`);
    if (q.limit) parts.push(`LIMIT ${this.count(q.limit, 'LIMIT')}`);
    if (q.offset) parts.push(`OFFSET ${this.count(q.offset, 'OFFSET')}`);
    let sql = parts.join(' ');
    for (const s of scope.order) if (s.marker) sql = sql.replace(s.marker, this.eventsTable(s.readsPersonId === true, s.groups ?? new Set()));
    return { sql, columns: outColumns, types };
  }

  /** `GROUP BY 1` and `ORDER BY 1` name a column by position: printed as the column itself. */
  private positional(e: Expr, q: Select, scope: Scope): Printed | null {
    if (e.k !== 'const' || typeof e.value !== 'number') return null;
    const col = q.columns[e.value - 1];
    if (!Number.isInteger(e.value) || !col || col.k === 'star') hogqlError(`Column position ${e.value} is out of range.`);
    if (col.k === 'alias') return { sql: chIdentifier(col.alias), t: scope.aliases.get(col.alias) ?? 'any' };
    return this.expr(col, scope);
  }

  private groupKey(e: Expr, q: Select, scope: Scope): string {
    return (this.positional(e, q, scope) ?? this.expr(e, scope)).sql;
  }

  private order(o: OrderItem, q: Select, scope: Scope): string {
    const p = this.positional(o.expr, q, scope) ?? this.expr(o.expr, scope);
    const way = `${o.desc ? 'DESC' : 'ASC'} NULLS ${o.nullsFirst ? 'FIRST' : 'LAST'}`;
    // A property orders numbers as numbers, as Quill's engine does (then any other values by their JSON text).
    if (p.t === 'json') return `${asNumber(p).sql} ${way}, ${p.sql} ${way}`;
    return `${p.sql} ${way}`;
  }

  private count(e: Expr, clause: string): string {
    if (e.k === 'const' && typeof e.value === 'number' && Number.isInteger(e.value) && e.value >= 0) return numberText(e.value);
    if (e.k === 'placeholder') {
      const v = this.placeholderValue(e.chain);
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return numberText(v);
    }
    return hogqlError(`${clause} must be a non-negative whole number.`);
  }

  /** `*` and `alias.*`: a subquery's columns, or a table's as Quill's engine lists them (STAR_COLUMNS). */
  private star(table: string | undefined, scope: Scope): { name: string; p: Printed }[] {
    const sources = table ? [scope.sources.get(table)] : scope.order;
    const cols: { name: string; p: Printed }[] = [];
    for (const s of sources) {
      if (!s) return hogqlError(`Unknown table ${table} in ${table}.*.`);
      const names = s.kind === 'sub' ? [...s.columns.keys()] : STAR_COLUMNS[s.kind];
      for (const name of names) cols.push({ name, p: this.sourceField(s, [name], [s.alias, name]) });
    }
    if (cols.length === 0) hogqlError('SELECT * needs a FROM.');
    return cols;
  }

  // ---- FROM: every table is a guarded subquery

  private ref(r: TableRef, scope: Scope): string {
    let kind: SourceKind;
    let sql: string;
    let columns = new Map<string, T>();
    const cte = r.table !== undefined ? scope.ctes.get(r.table) : undefined;
    if (r.query || cte) {
      // A CTE is printed where it is used, so it is guarded like any subquery and its name never reaches ClickHouse.
      if (cte && this.expanding.has(cte)) hogqlError(`WITH ${r.table} refers to itself: recursive WITH is not supported.`);
      if (cte) this.expanding.add(cte);
      const inner = this.query(r.query ?? cte!, scope.ctes);
      if (cte) this.expanding.delete(cte);
      kind = 'sub';
      sql = `(${inner.sql})`;
      columns = inner.columns;
    } else {
      const table = r.table!;
      if (TABLE_FUNCTIONS.has(table.toLowerCase())) hogqlError(`The table function ${table}() is not allowed.`);
      switch (table) {
        case 'events':
          // Printed once the query is: the join to person_distinct_id2 only when the query reads person_id.
          kind = 'events';
          sql = `\u0001events${this.subCount++}\u0001`;
          break;
        case 'persons':
          kind = 'persons';
          sql = this.personsTable();
          break;
        case 'person_distinct_ids':
          kind = 'pdi';
          sql = `(${this.distinctIdsTable()})`;
          break;
        case 'groups':
          kind = 'groups';
          sql = this.groupsTable();
          break;
        default:
          return hogqlError(`Unknown table "${table}". Quill answers events, persons, person_distinct_ids and groups.`);
      }
      for (const [name, t] of Object.entries(COLUMN_TYPES[kind])) columns.set(name, t);
    }
    const alias = r.alias ?? r.table ?? `__s${this.subCount++}`;
    if (scope.sources.has(alias)) hogqlError(`The table name ${alias} is used twice in one FROM: alias one of them.`);
    const source: Source = { kind, alias, columns, ...(kind === 'events' ? { marker: sql } : {}) };
    scope.sources.set(alias, source);
    scope.order.push(source);
    return `${sql} AS ${chIdentifier(alias)}`;
  }

  /** The one place a stored table is named: always with the team's rows only. */
  private guarded(table: (typeof VIRTUAL_TABLES)[keyof typeof VIRTUAL_TABLES] | 'person_distinct_id_overrides'): string {
    return `${chIdentifier(this.db)}.${chIdentifier(table)} AS raw`;
  }

  private teamOnly(): string {
    return `raw.team_id = ${this.team}`;
  }

  private distinctIdsTable(table: 'person_distinct_id2' | 'person_distinct_id_overrides' = 'person_distinct_id2'): string {
    return `SELECT raw.distinct_id AS distinct_id, argMax(raw.person_id, raw.version) AS person_id, ${this.team} AS team_id FROM ${this.guarded(table)} ` +
      `WHERE ${this.teamOnly()} GROUP BY raw.distinct_id HAVING argMax(raw.is_deleted, raw.version) = 0`;
  }

  /**
   * `events`; `person_id` is the distinct id's current person (merges after the event resolved), which costs a join
   * to the team's person_distinct_id2 (or its overrides: `personLookup`): made only for a query that reads it.
   */
  private eventsTable(withPersons: boolean, groupsRead: Set<number>): string {
    const tz = this.tz;
    // The materialized columns are '' where the property is missing; Quill's engine reads them as properties (null).
    const materialized = ['$session_id', '$window_id', ...[0, 1, 2, 3, 4].map((g) => `$group_${g}`)];
    const columns = materialized.map((c) => `nullIf(raw.${chIdentifier(c)}, '') AS ${chIdentifier(c)}`);
    for (let g = 0; g <= 4; g++) columns.push(`nullIf(raw.\`$group_${g}\`, '') AS \`group_${g}_key\``);
    const personId = withPersons ? 'ifNull(overrides.person_id, raw.person_id)' : 'raw.person_id';
    const lookup = this.opts.personLookup === 'overrides' ? 'person_distinct_id_overrides' : 'person_distinct_id2';
    let joins = withPersons ? ` LEFT JOIN (${this.distinctIdsTable(lookup)}) AS overrides ON raw.distinct_id = overrides.distinct_id` : '';
    for (const g of [...groupsRead].sort()) {
      columns.push(`group_${g}.properties AS \`group_${g}_properties\``, `group_${g}.created_at AS \`group_${g}_created_at\``);
      joins += ` LEFT JOIN (${this.groupsOfType(g)}) AS group_${g} ON raw.\`$group_${g}\` = group_${g}.key`;
    }
    return `(SELECT raw.uuid AS uuid, raw.event AS event, toTimeZone(raw.timestamp, ${tz}) AS timestamp, raw.distinct_id AS distinct_id, ` +
      `raw.elements_chain AS elements_chain, raw.properties AS properties, raw.person_properties AS person_properties, ` +
      `toTimeZone(raw.person_created_at, ${tz}) AS person_created_at, ${personId} AS person_id, ` +
      `${columns.join(', ')}, raw.team_id AS team_id FROM ${this.guarded('events')}${joins} WHERE ${this.teamOnly()})`;
  }

  /** The current groups of one type (the key an event's `$group_N` names). */
  private groupsOfType(index: number): string {
    return `SELECT raw.group_key AS key, argMax(raw.group_properties, (raw._timestamp, raw._offset)) AS properties, ` +
      `toTimeZone(argMax(raw.created_at, (raw._timestamp, raw._offset)), ${this.tz}) AS created_at FROM ${this.guarded('groups')} ` +
      `WHERE ${this.teamOnly()} AND raw.group_type_index = ${index} GROUP BY raw.group_key`;
  }

  private personsTable(): string {
    return `(SELECT raw.id AS id, toTimeZone(argMax(raw.created_at, raw.version), ${this.tz}) AS created_at, argMax(raw.properties, raw.version) AS properties, ` +
      `argMax(raw.is_identified, raw.version) = 1 AS is_identified, ${this.team} AS team_id FROM ${this.guarded('person')} ` +
      `WHERE ${this.teamOnly()} GROUP BY raw.id HAVING argMax(raw.is_deleted, raw.version) = 0)`;
  }

  private groupsTable(): string {
    return `(SELECT toInt64(raw.group_type_index) AS index, raw.group_key AS key, toTimeZone(argMax(raw.created_at, (raw._timestamp, raw._offset)), ${this.tz}) AS created_at, ` +
      `argMax(raw.group_properties, (raw._timestamp, raw._offset)) AS properties, ${this.team} AS team_id FROM ${this.guarded('groups')} ` +
      `WHERE ${this.teamOnly()} GROUP BY raw.group_type_index, raw.group_key)`;
  }

  // ---- names

  private field(chain: string[], scope: Scope): Printed {
    // A qualified name: `e.timestamp`, `p.properties.plan`, `f.first`.
    if (chain.length >= 2 && scope.sources.has(chain[0]!)) return this.sourceField(scope.sources.get(chain[0]!)!, chain.slice(1), chain);
    // A select alias of this query.
    if (chain.length === 1 && scope.aliases.has(chain[0]!)) return { sql: chIdentifier(chain[0]!), t: scope.aliases.get(chain[0]!)! };
    for (const s of scope.order) {
      if (s.kind === 'events' || s.columns.has(chain[0]!)) {
        const known = s.kind === 'events' ? chain[0]! in COLUMN_TYPES.events || chain[0] === 'person' || chain[0]!.startsWith('group_') : true;
        if (known) return this.sourceField(s, chain, chain);
      }
    }
    if (chain.length === 1 && scope.order.length === 0) return hogqlError(`Unknown field ${chain[0]}: the query has no FROM.`);
    return hogqlError(`Unknown field ${chain.join('.')}.`);
  }

  private sourceField(s: Source, rest: string[], whole: string[]): Printed {
    const col = (name: string) => `${chIdentifier(s.alias)}.${chIdentifier(name)}`;
    const [head, ...tail] = rest;
    if (s.kind === 'events') {
      if (head === 'properties' && tail.length > 0) return this.json(col('properties'), tail);
      if (head === 'person') {
        if (tail[0] === 'properties') return tail.length > 1 ? this.json(col('person_properties'), tail.slice(1)) : { sql: col('person_properties'), t: 'string' };
        if (tail[0] === 'created_at' && tail.length === 1) return { sql: col('person_created_at'), t: 'datetime' };
        if (tail[0] === 'id' && tail.length === 1) {
          s.readsPersonId = true;
          return { sql: col('person_id'), t: 'uuid' };
        }
        return hogqlError(`${whole.join('.')} is not supported with QUILL_ANALYTICS=clickhouse (persons on events: person.properties, person.created_at, person.id).`);
      }
      const group = /^group_([0-4])$/.exec(head!);
      if (group) return this.groupField(s, Number(group[1]), tail, whole);
      if (head === 'created_at') return hogqlError('events.created_at is not supported by Quill\'s HogQL (events keep no ingestion time).');
      const t = COLUMN_TYPES.events[head!];
      if (t === undefined || tail.length > 0) return hogqlError(`Unknown field ${whole.join('.')}.`);
      if (head === 'person_id') s.readsPersonId = true;
      return { sql: col(head!), t };
    }
    if (s.kind === 'pdi' && head === 'person') return hogqlError(`${whole.join('.')} is not supported with QUILL_ANALYTICS=clickhouse: join persons instead.`);
    const t = s.columns.get(head!);
    if (t === undefined) return hogqlError(`Unknown field ${whole.join('.')}.`);
    if (tail.length === 0) return { sql: col(head!), t };
    // `p.properties.plan`, or a JSON text column of a subquery.
    if (t === 'string' || t === 'json' || t === 'any') return this.json(col(head!), tail);
    return hogqlError(`Unknown field ${whole.join('.')}.`);
  }

  /** `group_N.key`, `group_N.created_at`, `group_N.properties[.key…]`: the current row of the event's group. */
  private groupField(s: Source, index: number, rest: string[], whole: string[]): Printed {
    const col = (name: string) => `${chIdentifier(s.alias)}.${chIdentifier(`group_${index}_${name}`)}`;
    const [field, ...keys] = rest;
    if (field === 'key' && keys.length === 0) return { sql: col('key'), t: 'string' };
    (s.groups ??= new Set()).add(index);
    if (field === 'created_at' && keys.length === 0) return { sql: col('created_at'), t: 'datetime' };
    if (field === 'properties') return keys.length === 0 ? { sql: col('properties'), t: 'string' } : this.json(col('properties'), keys);
    return hogqlError(`Unknown field ${whole.join('.')}.`);
  }

  /** A property: the raw JSON of its value, null when missing or JSON null. */
  private json(column: string, keys: string[]): Printed {
    const path = keys.map((k) => this.param(k)).join(', ');
    return { sql: `nullIf(nullIf(JSONExtractRaw(${column}, ${path}), ''), 'null')`, t: 'json' };
  }

  private placeholderValue(chain: string[]): unknown {
    const name = chain.join('.');
    if (!Object.prototype.hasOwnProperty.call(this.opts.values, name)) hogqlError(`The placeholder {${name}} has no value: pass it in "values".`);
    return this.opts.values[name];
  }

  private literal(v: unknown): Printed {
    if (v === null || v === undefined) return { sql: 'NULL', t: 'null' };
    if (typeof v === 'number') return { sql: numberText(v), t: 'number' };
    if (typeof v === 'boolean') return { sql: v ? 'true' : 'false', t: 'bool' };
    if (typeof v === 'string') return { sql: this.param(v), t: 'string' };
    if (Array.isArray(v)) return { sql: `(${v.map((x) => this.literal(x).sql).join(', ')}${v.length === 1 ? ',' : ''})`, t: 'any' };
    // An instant, exact to the millisecond: only Quill's own callers pass one (a request's JSON values never are Dates).
    if (v instanceof Date) return { sql: this.instant(v.getTime()), t: 'datetime' };
    return { sql: this.param(JSON.stringify(v)), t: 'string' };
  }

  // ---- {filters}: the request's property filters, date range and test-account filters, as Quill's engine reads them

  private filterSource(scope: Scope): Source {
    const events = scope.order.find((s) => s.kind === 'events');
    if (!events) hogqlError('Cannot use the {filters} placeholder in a SELECT that does not select from the events table.');
    return events;
  }

  private filters(chain: string[], scope: Scope): Printed {
    if (chain.length !== 1) hogqlError(`{${chain.join('.')}} is not supported with QUILL_ANALYTICS=clickhouse: use {filters}.`);
    const events = this.filterSource(scope);
    const f = this.opts.filters ?? null;
    const parts: string[] = [];
    if (f && Object.keys(f).length > 0) {
      const tree = parseFilters(f.properties ?? null, 'filters');
      if (tree) parts.push(this.filterNode(tree, events));
      const timestamp = `${chIdentifier(events.alias)}.\`timestamp\``;
      const from = this.dateBound(f, 'from');
      if (from !== null) parts.push(`${timestamp} >= ${this.instant(from)}`);
      const to = this.dateBound(f, 'to');
      if (to !== null) parts.push(`${timestamp} < ${this.instant(to)}`);
      if (f.filterTestAccounts === true && this.opts.testAccountFilters) parts.push(this.filterNode(this.opts.testAccountFilters, events));
    }
    if (this.opts.filterTree) parts.push(this.filterNode(this.opts.filterTree, events));
    return { sql: parts.length === 0 ? 'true' : `(${parts.join(' AND ')})`, t: 'bool' };
  }

  private instant(ms: number): string {
    return `fromUnixTimestamp64Milli(toInt64(${numberText(Math.trunc(ms))}), ${this.tz})`;
  }

  private dateBound(f: Record<string, unknown>, which: 'from' | 'to'): number | null {
    return filtersDateBound(f, which, this.opts.now, this.opts.timeZone);
  }

  /** A filter tree over the events source: two-valued (a leaf on a missing or odd value is false, not NULL). */
  private filterNode(node: FilterNode, events: Source): string {
    if (isFilterGroup(node)) {
      if (node.children.length === 0) return 'true';
      return `(${node.children.map((c) => this.filterNode(c, events)).join(node.and ? ' AND ' : ' OR ')})`;
    }
    if (node.type === 'event_name' && node.operator === 'exact') {
      // An action step's event (src/domain/analytics/action-filter.ts): the event's name, case-sensitive.
      const names = (Array.isArray(node.value) ? node.value : [node.value]).map((v) => this.param(String(v)));
      const positive = names.length === 0 ? 'false' : `${chIdentifier(events.alias)}.\`event\` IN (${names.join(', ')}${names.length === 1 ? ',' : ''})`;
      return node.negation ? `NOT (${positive})` : positive;
    }
    if (node.type === 'element') {
      // An action step's (or an insight's) condition on the autocapture chain, printed as the local engine reads it.
      const gap = elementConditionGap(node);
      if (gap !== null) hogqlError(`In {filters}, ${gap}.`);
      return elementConditionSql(node, `${chIdentifier(events.alias)}.\`elements_chain\``, (text) => this.param(text));
    }
    if (node.type === 'group' && node.groupTypeIndex !== null) {
      // The event's group of that type as Quill holds it now (its latest properties), as the local engine reads it
      // (src/worker/analytics/block-filter.ts); an event without a group, or of a group never stored, is matched as
      // a group without the property.
      const key = `${chIdentifier(events.alias)}.${chIdentifier(`group_${node.groupTypeIndex}_key`)}`;
      const groups = `(${this.groupsOfType(node.groupTypeIndex)})`;
      const matching = `SELECT key FROM ${groups} WHERE ${this.propertyCondition(node, 'properties')}`;
      const base = compileMatcher(node)(false, undefined);
      const absent = node.negation ? !base : base;
      return `if(ifNull(${key} IN (SELECT key FROM ${groups}), false), ifNull(${key} IN (${matching}), false), ${absent})`;
    }
    if (node.type === 'cohort') return this.cohortCondition(node, events);
    if (node.type !== 'event' && node.type !== 'person') {
      hogqlError(`${node.type} filters in {filters} are not supported with QUILL_ANALYTICS=clickhouse yet.`);
    }
    return this.propertyCondition(node, `${chIdentifier(events.alias)}.${chIdentifier(node.type === 'event' ? 'properties' : 'person_properties')}`);
  }

  /**
   * A dynamic cohort's leaf: its tree of person property filters in its place (negated for `not_in`), as the local
   * engine's cohortMask reads it; a cohort without filters matches no one. Cohorts naming each other print within
   * one another; one that names itself back is a cycle the local engine stops, and so is answered there.
   */
  private cohortCondition(node: FilterLeaf, events: Source): string {
    const id = Number(node.value);
    const negated = (node.operator === 'not_in') !== node.negation;
    const members = this.opts.staticCohorts?.get(id);
    if (members === null) throw new NotPrintable(`static cohort ${id} has more than ${STATIC_COHORT_PRINT_BOUND.toLocaleString('en-US')} persons`);
    if (members !== undefined) {
      const positive = this.personIn(members, events);
      return negated ? `NOT (${positive})` : positive;
    }
    const cohorts = this.opts.cohorts;
    if (!cohorts?.has(id)) throw new NotPrintable(`cohort ${id} is not known to the query`);
    if (this.cohortsPrinting.has(id)) throw new NotPrintable(`cohort ${id} refers back to itself`);
    const tree = cohorts.get(id)!;
    this.cohortsPrinting.add(id);
    const positive = tree === null ? 'false' : this.filterNode(tree, events);
    this.cohortsPrinting.delete(id);
    return negated ? `NOT (${positive})` : positive;
  }

  /**
   * The event's current person is one of `uuids` (a static cohort's members): one comma-separated text parameter
   * (the SQL stays small whatever the cohort's size), split into the set IN builds once per query.
   */
  private personIn(uuids: readonly string[], events: Source): string {
    if (uuids.length === 0) return 'false';
    events.readsPersonId = true;
    return `${chIdentifier(events.alias)}.\`person_id\` IN (SELECT toUUID(arrayJoin(splitByChar(',', ${this.param(uuids.join(','))}))))`;
  }

  /** A property leaf over the JSON text in `column` (an event's, person's or group's properties): two-valued. */
  private propertyCondition(node: FilterLeaf, column: string): string {
    const raw = this.json(column, [node.key]).sql;
    const text = asString({ sql: raw, t: 'json' }).sql;
    const present = `isNotNull(${raw})`;
    const texts = (v: unknown) => (Array.isArray(v) ? v : [v]).map((x) => this.param(typeof x === 'string' ? x : x === null ? 'null' : typeof x === 'object' ? JSON.stringify(x) : String(x)));
    let positive: string;
    let negated = node.negation;
    switch (node.operator) {
      case 'is_set':
      case 'is_not_set':
        positive = present;
        negated = negated !== (node.operator === 'is_not_set');
        break;
      case 'exact':
      case 'is_not': {
        const list = texts(node.value);
        positive = list.length === 0 ? 'false' : `(${present} AND ${text} IN (${list.join(', ')}${list.length === 1 ? ',' : ''}))`;
        negated = negated !== (node.operator === 'is_not');
        break;
      }
      case 'icontains':
      case 'not_icontains':
        positive = `(${present} AND position(lowerUTF8(${text}), lowerUTF8(${texts(node.value)[0]})) > 0)`;
        negated = negated !== (node.operator === 'not_icontains');
        break;
      case 'regex':
      case 'not_regex':
        positive = `(${present} AND match(${text}, ${texts(node.value)[0]}))`;
        negated = negated !== (node.operator === 'not_regex');
        break;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const bound = typeof node.value === 'number' ? node.value : Number(String(node.value).trim());
        if (!Number.isFinite(bound) || String(node.value).trim() === '') return negated ? 'true' : 'false';
        const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[node.operator];
        positive = `(toFloat64OrNull(${text}) ${op} ${numberText(bound)})`;
        break;
      }
      case 'is_date_exact':
      case 'is_date_after':
      case 'is_date_before': {
        // The filter's date as the local engine resolves it (relative to the query's now, in the project's zone);
        // the property's as property-date.ts reads it, in SQL.
        const bound = filterDateBound(node.value, this.opts.now, this.opts.timeZone);
        if (Number.isNaN(bound)) return negated ? 'true' : 'false';
        const instant = propertyInstantSql(text, this.tz, this.opts.timeZone === 'UTC', (v) => this.param(v));
        positive = node.operator === 'is_date_exact'
          ? `(floor(${instant} / 1000) = ${numberText(Math.floor(bound / 1000))})`
          : `(${instant} ${node.operator === 'is_date_after' ? '>' : '<'} ${numberText(bound)})`;
        break;
      }
      default:
        return hogqlError(`The filter operator ${node.operator} in {filters} is not supported with QUILL_ANALYTICS=clickhouse yet.`);
    }
    const twoValued = `ifNull(${positive}, false)`;
    return negated ? `NOT ${twoValued}` : twoValued;
  }

  // ---- expressions

  private bool(e: Expr, scope: Scope): string {
    return this.expr(e, scope).sql;
  }

  private expr(e: Expr, scope: Scope): Printed {
    switch (e.k) {
      case 'const':
        return this.literal(e.value);
      case 'field':
        return this.field(e.chain, scope);
      case 'placeholder':
        if (e.chain[0] === 'filters') return this.filters(e.chain, scope);
        if (e.chain.length === 1 && this.opts.filterTrees && Object.hasOwn(this.opts.filterTrees, e.chain[0]!)) {
          const tree = this.opts.filterTrees[e.chain[0]!]!;
          return { sql: tree === null ? 'true' : this.filterNode(tree, this.filterSource(scope)), t: 'bool' };
        }
        return this.literal(this.placeholderValue(e.chain));
      case 'filter':
        return { sql: this.filterNode(e.node, this.filterSource(scope)), t: 'bool' };
      case 'alias':
        return hogqlError('Aliases inside expressions are not supported.');
      case 'star':
        return hogqlError('* is only allowed in count(*) and the select list.');
      case 'subquery': {
        const inner = this.query(e.query, scope.ctes);
        return { sql: `(${inner.sql})`, t: inner.types[0] ?? [...inner.columns.values()][0] ?? 'any' };
      }
      case 'call':
        return this.call(e, scope);
    }
  }

  private call(e: Extract<Expr, { k: 'call' }>, scope: Scope): Printed {
    const agg = aggregateOf(e.name, e.distinct === true);
    if (agg) return this.aggregate(e, agg.name, agg.conditional, scope);
    const lower = e.name.toLowerCase();
    if (TABLE_FUNCTIONS.has(lower) && !scalarFunction(e.name)) hogqlError(`The table function ${e.name}() is not allowed.`);
    const refused = Object.prototype.hasOwnProperty.call(REFUSED_FUNCTIONS, e.name) ? REFUSED_FUNCTIONS[e.name] : undefined;
    if (refused) hogqlError(`${refused} is not supported by Quill's HogQL.`);
    const name = scalarFunction(e.name);
    if (!name || !FUNCTIONS[name] || name.startsWith('$')) return hogqlError(`Unknown function ${e.name}().`);
    if (e.params) hogqlError(`${e.name}() takes no parameters.`);
    const args = (): Printed[] => e.args.map((a) => this.expr(a, scope));

    if (COMPARISONS.has(name)) {
      const [a, b] = this.comparable(this.expr(e.args[0]!, scope), this.expr(e.args[1]!, scope));
      return { sql: `${name}(${a.sql}, ${b.sql})`, t: 'bool' };
    }
    if (name === 'in' || name === 'notIn') return this.inCall(e, name, scope);
    if (name === 'and' || name === 'or' || name === 'xor') return { sql: `${name}(${args().map((a) => a.sql).join(', ')})`, t: 'bool' };
    if (name === 'not') return { sql: `not(${this.expr(e.args[0]!, scope).sql})`, t: 'bool' };
    if (name === 'tuple' || name === 'array') {
      const items = args();
      const sql = name === 'tuple' ? `tuple(${items.map((a) => a.sql).join(', ')})` : `[${items.map((a) => a.sql).join(', ')}]`;
      return { sql, t: 'any' };
    }
    if (STRING_ARGS.has(name)) {
      const items = args().map((a) => asString(a));
      return { sql: `${name}(${items.map((a) => a.sql).join(', ')})`, t: BOOL_RESULT.has(name) ? 'bool' : NUMERIC_RESULT.has(name) ? 'number' : 'string' };
    }
    if (NUMERIC_ARGS.has(name)) {
      const items = args().map((a) => (a.t === 'datetime' || a.t === 'date' || a.t === 'any' ? a : asNumber(a)));
      const t: T = items.some((a) => a.t === 'datetime') ? 'datetime' : items.some((a) => a.t === 'date') ? 'date' : 'number';
      return { sql: `${name}(${items.map((a) => a.sql).join(', ')})`, t };
    }
    switch (name) {
      case 'if': {
        const [c, a, b] = this.alike(args());
        return { sql: `if(${c!.sql}, ${a!.sql}, ${b!.sql})`, t: a!.t === 'null' ? b!.t : a!.t };
      }
      case 'multiIf': {
        const items = args();
        const values = this.alike(items.filter((_, i) => i % 2 === 1 || i === items.length - 1));
        const out = items.map((a, i) => (i % 2 === 1 || i === items.length - 1 ? values.shift()! : a));
        return { sql: `multiIf(${out.map((a) => a.sql).join(', ')})`, t: out[out.length - 1]!.t };
      }
      case 'coalesce':
      case 'ifNull':
      case 'nullIf':
      case 'assumeNotNull': {
        const items = this.alike(args());
        return { sql: `${name}(${items.map((a) => a.sql).join(', ')})`, t: items.find((a) => a.t !== 'null')?.t ?? 'null' };
      }
      case 'isNull':
      case 'isNotNull':
        return { sql: `${name}(${this.expr(e.args[0]!, scope).sql})`, t: 'bool' };
      case 'toString':
        return { sql: `toString(${asString(this.expr(e.args[0]!, scope)).sql})`, t: 'string' };
      case 'toFloat':
      case 'toFloatOrNull':
        return { sql: `toFloat64OrNull(toString(${asString(this.expr(e.args[0]!, scope)).sql}))`, t: 'number' };
      case 'toFloatOrZero':
        return { sql: `toFloat64OrZero(toString(${asString(this.expr(e.args[0]!, scope)).sql}))`, t: 'number' };
      case 'toInt':
      case 'toIntOrNull':
        return { sql: `toInt64OrNull(toString(${asString(this.expr(e.args[0]!, scope)).sql}))`, t: 'number' };
      case 'toIntOrZero':
        return { sql: `toInt64OrZero(toString(${asString(this.expr(e.args[0]!, scope)).sql}))`, t: 'number' };
      case 'toBool':
        return { sql: `toBool(${this.expr(e.args[0]!, scope).sql})`, t: 'bool' };
      case 'toUUID':
        return { sql: `toUUIDOrNull(${asString(this.expr(e.args[0]!, scope)).sql})`, t: 'uuid' };
      case 'toDate': {
        const a = this.expr(e.args[0]!, scope);
        return { sql: a.t === 'datetime' || a.t === 'date' ? `toDate(${a.sql})` : `toDateOrNull(${asString(a).sql})`, t: 'date' };
      }
      case 'toDateTime':
      case 'parseDateTimeBestEffort': {
        const a = this.expr(e.args[0]!, scope);
        const zone = e.args[1] ? asString(this.expr(e.args[1], scope)).sql : this.tz;
        if (a.t === 'datetime' || a.t === 'date') return { sql: `toDateTime64(${a.sql}, 6, ${zone})`, t: 'datetime' };
        if (a.t === 'number') return { sql: `toDateTime64(${a.sql}, 6, ${zone})`, t: 'datetime' };
        return { sql: `parseDateTime64BestEffortOrNull(${asString(a).sql}, 6, ${zone})`, t: 'datetime' };
      }
      case 'now':
        return { sql: this.now(), t: 'datetime' };
      case 'today':
        return { sql: `toDate(${this.now()})`, t: 'date' };
      case 'yesterday':
        return { sql: `toDate(${this.now()}) - 1`, t: 'date' };
      case 'toTimeZone':
        return hogqlError('toTimeZone() is not supported by Quill\'s HogQL.');
      case 'toDayOfWeek': {
        // With the zone spelled out: without it, ClickHouse 25 (chdb 3.4) skipped parts wrongly by their min-max of
        // the timestamp for `toDayOfWeek(toTimeZone(timestamp, 'America/New_York')) IN (6, 7)`.
        const items = args();
        const [x, mode, zone] = items;
        if (x!.t !== 'datetime') return this.plainCall(name, items);
        return { sql: `toDayOfWeek(${x!.sql}, ${mode?.sql ?? '0'}, ${zone ? asString(zone).sql : this.tz})`, t: 'number' };
      }
      default:
        return this.plainCall(name, args());
    }
  }

  /** A function ClickHouse has under the same name and meaning; a property argument is read as text. */
  private plainCall(name: string, args: Printed[]): Printed {
    const items = args.map((a) => (a.t === 'json' ? asString(a) : a));
    // Time functions keep the project's zone: their argument is already in it (toTimeZone on the column).
    const t: T = BOOL_RESULT.has(name) ? 'bool' : NUMERIC_RESULT.has(name) ? 'number' : DATETIME_RESULT.has(name) ? 'datetime'
      : DATE_RESULT.has(name) ? 'date' : name.startsWith('toInterval') || name.startsWith('add') || name.startsWith('subtract') ? (items[0]?.t ?? 'any') : 'any';
    return { sql: `${name}(${items.map((a) => a.sql).join(', ')})`, t: name === 'formatDateTime' ? 'string' : t };
  }

  private now(): string {
    return `fromUnixTimestamp64Milli(toInt64(${numberText(Math.trunc(this.opts.now))}), ${this.tz})`;
  }

  /** Values of one position (if's branches, coalesce's arguments): JSON read as text when another is text. */
  private alike(items: Printed[]): Printed[] {
    const wantsText = items.some((a) => a.t === 'string');
    const wantsNumber = items.some((a) => a.t === 'number');
    return items.map((a) => (a.t !== 'json' ? a : wantsText ? asString(a) : wantsNumber ? asNumber(a) : a));
  }

  /** The two sides of a comparison in one domain: a property next to text is text, next to a number a number… */
  private comparable(a: Printed, b: Printed): [Printed, Printed] {
    return [this.toward(a, b.t), this.toward(b, a.t)];
  }

  private toward(a: Printed, other: T): Printed {
    if (a.t === 'json') {
      if (other === 'number') return asNumber(a);
      if (other === 'datetime') return { sql: `parseDateTime64BestEffortOrNull(${asString(a).sql}, 6, ${this.tz})`, t: 'datetime' };
      if (other === 'json' || other === 'null' || other === 'any') return a;
      return asString(a);
    }
    if (a.t === 'string') {
      if (other === 'datetime') return { sql: `parseDateTime64BestEffort(${a.sql}, 6, ${this.tz})`, t: 'datetime' };
      if (other === 'date') return { sql: `toDate(${a.sql})`, t: 'date' };
      if (other === 'uuid') return { sql: `toUUIDOrNull(${a.sql})`, t: 'uuid' };
      if (other === 'number') return { sql: `toFloat64OrNull(${a.sql})`, t: 'number' };
      if (other === 'bool') return { sql: `(${a.sql} = 'true')`, t: 'bool' };
    }
    if (a.t === 'bool' && other === 'json') return { sql: `if(${a.sql}, 'true', 'false')`, t: 'string' };
    return a;
  }

  private inCall(e: Extract<Expr, { k: 'call' }>, name: 'in' | 'notIn', scope: Scope): Printed {
    const left = this.expr(e.args[0]!, scope);
    const rhs = e.args[1]!;
    const op = name === 'in' ? 'IN' : 'NOT IN';
    if (rhs.k === 'subquery') {
      const sub = this.expr(rhs, scope);
      return { sql: `(${this.toward(left, sub.t).sql} ${op} ${sub.sql})`, t: 'bool' };
    }
    let items: Printed[];
    if (rhs.k === 'call' && (rhs.name === 'tuple' || rhs.name === 'array')) items = rhs.args.map((a) => this.expr(a, scope));
    else if (rhs.k === 'placeholder' && Array.isArray(this.placeholderValue(rhs.chain))) items = (this.placeholderValue(rhs.chain) as unknown[]).map((v) => this.literal(v));
    else items = [this.expr(rhs, scope)];
    if (items.length === 0) return { sql: name === 'in' ? 'false' : 'true', t: 'bool' };
    const kinds = new Set(items.map((i) => i.t).filter((t) => t !== 'null'));
    const target: T = kinds.size === 1 ? [...kinds][0]! : 'any';
    const l = target === 'any' ? left : this.toward(left, target);
    const r = items.map((i) => this.toward(i, l.t));
    return { sql: `(${l.sql} ${op} (${r.map((i) => i.sql).join(', ')}${r.length === 1 ? ',' : ''}))`, t: 'bool' };
  }

  private aggregate(e: Extract<Expr, { k: 'call' }>, base: string, conditional: boolean, scope: Scope): Printed {
    const valueArgs = conditional ? e.args.slice(0, -1) : e.args;
    const cond = conditional ? `, ${this.expr(e.args[e.args.length - 1]!, scope).sql}` : '';
    const noStar = valueArgs.filter((a) => a.k !== 'star');
    const args = noStar.map((a) => this.expr(a, scope));
    const suffix = conditional ? 'If' : '';
    const list = (items: Printed[]) => items.map((a) => a.sql).join(', ');
    switch (base) {
      case 'count':
        if (args.length === 0) return { sql: `count${suffix}(${cond.slice(2)})`, t: 'number' };
        return { sql: `count${suffix}(${list(args)}${cond})`, t: 'number' };
      case 'uniqExact':
      case 'uniq':
        return { sql: `uniqExact${suffix}(${list(args)}${cond})`, t: 'number' };
      case 'sum':
      case 'avg':
        return { sql: `${base}${suffix}OrNull(${list(args.map(asNumber))}${cond})`, t: 'number' };
      case 'min':
      case 'max': {
        const a = args[0];
        if (a?.t === 'json') {
          // Numbers compare as numbers and come before texts, as in Quill's engine: the numeric extreme if any.
          const num = `${base}${suffix}OrNull(${asNumber(a).sql}${cond})`;
          return { sql: `if(isNotNull(${num}), toString(${num}), ${base}${suffix}OrNull(${a.sql}${cond}))`, t: 'json' };
        }
        return { sql: `${base}${suffix}OrNull(${list(args)}${cond})`, t: a?.t ?? 'any' };
      }
      case 'quantile':
      case 'median': {
        const level = base === 'median' ? 0.5 : e.params?.length === 1 && e.params[0]!.k === 'const' ? Number(e.params[0]!.value) : Number.NaN;
        if (!(level >= 0 && level <= 1)) hogqlError(`${e.name}() needs a level between 0 and 1: quantile(0.9)(x).`);
        // Linear interpolation between the closest values, as Quill's own quantile (and DuckDB's quantile_cont).
        return { sql: `quantileExactInclusive${suffix}OrNull(${numberText(level)})(${list(args.map(asNumber))}${cond})`, t: 'number' };
      }
      case 'any':
        return { sql: `any${suffix}(${list(args)}${cond})`, t: args[0]?.t ?? 'any' };
      case 'argMin':
      case 'argMax':
        return { sql: `${base}${suffix}(${list(args)}${cond})`, t: args[0]?.t ?? 'any' };
      case 'groupArray':
      case 'groupUniqArray':
        return { sql: `${base}${suffix}(${list(args.map(asString))}${cond})`, t: 'any' };
      default:
        return hogqlError(`The aggregate function ${e.name}() is not supported with QUILL_ANALYTICS=clickhouse.`);
    }
  }
}

/** A JSON value read as text: strings without their quotes (PostHog's reading of a property as String). */
function asString(a: Printed): Printed {
  if (a.t !== 'json') return a;
  return { sql: `replaceRegexpAll(${a.sql}, '^"|"$', '')`, t: 'string' };
}

function asNumber(a: Printed): Printed {
  if (a.t === 'json' || a.t === 'string') return { sql: `toFloat64OrNull(${a.sql})`, t: 'number' };
  if (a.t === 'bool') return { sql: `toUInt8(${a.sql})`, t: 'number' };
  return a;
}

/**
 * A top-level column in the form the answer's rows are made from (src/worker/query/clickhouse-rows.ts): instants as
 * epoch milliseconds, dates as day numbers, persons as uuid text, booleans as 0/1; JSON stays its raw text.
 */
function outputColumn(col: string, type: ColumnInfo['type'] | undefined): string {
  switch (type) {
    case 'DateTime':
      return `toUnixTimestamp64Milli(toDateTime64(${col}, 3))`;
    case 'Date':
      return `toInt64(toDate(${col}))`;
    case 'Person':
      return `toString(${col})`;
    case 'Bool':
      return `toUInt8(${col})`;
    default:
      return col;
  }
}

/**
 * The stored tables named in printed SQL, each with the team its guard keeps (null: not guarded), for checks that
 * every read goes through the guard. The guard is the WHERE right after the table (after the events' overrides
 * join, itself a guarded read).
 */
export function storedTableReads(sql: string, database: string): { table: string; team: number | null }[] {
  const out: { table: string; team: number | null }[] = [];
  const re = new RegExp(`\`${database}\`\\.\`([a-z_0-9]+)\` AS raw `, 'g');
  for (const m of sql.matchAll(re)) {
    let at = m.index! + m[0].length;
    let joinsOk = true;
    while (joinsOk && sql.startsWith('LEFT JOIN (', at)) {
      let depth = 0;
      at += 'LEFT JOIN '.length;
      do {
        const ch = sql[at++];
        if (ch === '(') depth++;
        else if (ch === ')') depth--;
      } while (depth > 0 && at < sql.length);
      const join = / AS (?:overrides ON raw\.distinct_id = overrides\.distinct_id|(group_[0-4]) ON raw\.`\$\1` = \1\.key) /y;
      join.lastIndex = at;
      joinsOk = join.test(sql);
      at = join.lastIndex;
    }
    if (!joinsOk) {
      out.push({ table: m[1]!, team: null });
      continue;
    }
    const where = /WHERE raw\.team_id = (\d+)(?![\d.])/y;
    where.lastIndex = at;
    const guard = where.exec(sql);
    out.push({ table: m[1]!, team: guard ? Number(guard[1]) : null });
  }
  return out;
}
