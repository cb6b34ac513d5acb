/**
 * A small, documented subset of the experimental `select` / `where` parameters of GET /events/ (PostHog 2023:
 * JSON arrays of HogQL expressions; ingestion-and-api.md §5.4). Full HogQL is out of scope; what is understood:
 *
 * - `select`: a JSON list of plain columns — `uuid`, `event`, `distinct_id`, `timestamp`, `person_id`,
 *   `elements_chain`, `properties`, `properties.<key>` (also `properties.'<key>'` / `properties["<key>"]`) — or
 *   `*` (uuid, event, properties, timestamp, distinct_id, elements_chain). The answer becomes
 *   `{columns, types, results (one list per row), hasMore}`; the other list parameters still apply.
 * - `where`: a JSON list of comparisons, ANDed: `<column> <op> <literal>` with op `=`, `==`, `!=`, `<`, `<=`,
 *   `>`, `>=` and a literal in single quotes, a number, `true`, `false` or `null`. Only together with `select`
 *   (PostHog refuses `where` alone too).
 * Anything else (functions, aggregations, aliases, OR) is answered with 400 naming the expression, never ignored.
 *
 * Parsed forms are plain data so they travel to every worker in the scan message.
 */
import { Errors } from '../../../protocol/errors.js';

export type ColumnName = 'uuid' | 'event' | 'distinct_id' | 'timestamp' | 'person_id' | 'elements_chain' | 'properties';

export interface Column {
  /** The expression as the caller wrote it (the answer's `columns`). */
  label: string;
  name: ColumnName;
  /** For `properties.<key>`. */
  key: string | null;
}

export type Literal = string | number | boolean | null;

export interface Comparison {
  column: Column;
  op: '=' | '!=' | '<' | '<=' | '>' | '>=';
  value: Literal;
}

const PLAIN: readonly ColumnName[] = ['uuid', 'event', 'distinct_id', 'timestamp', 'person_id', 'elements_chain', 'properties'];
const STAR: readonly ColumnName[] = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain'];

/** ClickHouse types PostHog reports for these columns. */
const TYPES: Record<ColumnName, string> = {
  uuid: 'UUID', event: 'String', distinct_id: 'String', timestamp: "DateTime64(6, 'UTC')", person_id: 'UUID',
  elements_chain: 'String', properties: 'String',
};

export function typeOf(c: Column): string {
  return c.key === null ? TYPES[c.name] : 'String';
}

function jsonList(raw: string, attr: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // A bare expression (not JSON) is accepted as a one-item list.
    parsed = [raw];
  }
  if (typeof parsed === 'string') parsed = [parsed];
  if (!Array.isArray(parsed) || parsed.some((x) => typeof x !== 'string')) {
    throw Errors.validation(attr, 'invalid_input', `${attr} must be a JSON list of expressions.`);
  }
  return parsed;
}

const PROPERTY = /^properties\s*(?:\.\s*([A-Za-z0-9_$\-]+)|\.\s*'((?:[^'\\]|\\.)*)'|\[\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*\])$/;

function columnOf(expr: string, attr: string): Column {
  const text = expr.trim();
  if ((PLAIN as readonly string[]).includes(text)) return { label: text, name: text as ColumnName, key: null };
  const m = PROPERTY.exec(text);
  if (m) {
    const key = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').replace(/\\(.)/g, '$1');
    return { label: text, name: 'properties', key };
  }
  throw Errors.validation(attr, 'invalid_input',
    `Unsupported ${attr} expression "${expr}": only the columns ${PLAIN.join(', ')}, properties.<key> and * are supported.`);
}

export function parseSelect(raw: string | undefined): Column[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  const out: Column[] = [];
  for (const expr of jsonList(raw, 'select') as string[]) {
    if (expr.trim() === '*') {
      for (const name of STAR) out.push({ label: name, name, key: null });
    } else out.push(columnOf(expr, 'select'));
  }
  if (out.length === 0) throw Errors.validation('select', 'invalid_input', 'select needs at least one column.');
  return out;
}

const TWO_CHAR_OPS: ReadonlySet<string> = new Set(['==', '!=', '<=', '>=']);
const ONE_CHAR_OPS: ReadonlySet<string> = new Set(['=', '<', '>']);
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * `<column> <op> <literal>` split at the first operator with text on both sides (what
 * `/^(.+?)\s*(==|!=|<=|>=|=|<|>)\s*(.+)$/` would match, without its quadratic retries on long text that has no
 * operator: test/unit/events-where.test.ts compares the two). `expr` is trimmed; one with a line break is refused.
 */
export function splitComparison(expr: string): [string, string, string] | null {
  if (LINE_BREAK.test(expr)) return null;
  for (let i = 1; i < expr.length; i++) {
    // As the alternation does: a two-character operator first, then a one-character one at the same place.
    for (const op of [expr.slice(i, i + 2), expr[i]!]) {
      if (!(op.length === 2 ? TWO_CHAR_OPS : ONE_CHAR_OPS).has(op)) continue;
      const rest = expr.slice(i + op.length);
      if (rest.length === 0) continue;
      const value = rest.trimStart();
      return [expr.slice(0, i).trimEnd(), op, value === '' ? rest : value];
    }
  }
  return null;
}

export function parseWhere(raw: string | undefined, select: Column[] | null): Comparison[] {
  if (raw === undefined || raw.trim() === '') return [];
  if (select === null) throw Errors.validation('where', 'invalid_input', 'Cannot use "where" without "select".');
  return (jsonList(raw, 'where') as string[]).map((expr) => {
    const m = splitComparison(expr.trim());
    if (!m) throw Errors.validation('where', 'invalid_input', `Unsupported where expression "${expr}": expected <column> <op> <literal>.`);
    const column = columnOf(m[0], 'where');
    const value = literalOf(m[2].trim(), expr);
    const op = m[1] === '==' ? '=' : (m[1] as Comparison['op']);
    return { column, op, value };
  });
}

function literalOf(text: string, expr: string): Literal {
  if (/^'(?:[^'\\]|\\.)*'$/.test(text)) return text.slice(1, -1).replace(/\\(.)/g, '$1');
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null' || text === 'NULL') return null;
  if (/^-?\d+(?:\.\d+)?$/.test(text)) return Number(text);
  throw Errors.validation('where', 'invalid_input', `Unsupported literal in where expression "${expr}".`);
}

/** What a column reads from one event row. */
export interface ColumnSource {
  uuid: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  elements_chain: string;
  properties(): Record<string, unknown>;
  personUuid(): string | null;
}

/** Column value as HogQL would show it: property values as text (strings unquoted, others as JSON). */
export function columnValue(c: Column, row: ColumnSource): Literal {
  switch (c.name) {
    case 'properties': {
      const props = row.properties();
      if (c.key === null) return JSON.stringify(props);
      if (!Object.hasOwn(props, c.key)) return null;
      const v = props[c.key];
      if (v === null || v === undefined) return null;
      return typeof v === 'string' ? v : JSON.stringify(v);
    }
    case 'person_id':
      return row.personUuid();
    default:
      return row[c.name];
  }
}

export function matchesWhere(where: readonly Comparison[], row: ColumnSource): boolean {
  for (const w of where) if (!compare(w, columnValue(w.column, row))) return false;
  return true;
}

function compare(w: Comparison, v: Literal): boolean {
  if (w.value === null || v === null) {
    const same = w.value === v;
    if (w.op === '=') return same;
    if (w.op === '!=') return !same;
    return false;
  }
  let order: number;
  const [a, b] = [Number(v), Number(w.value)];
  if (typeof w.value !== 'boolean' && v !== '' && w.value !== '' && Number.isFinite(a) && Number.isFinite(b)) {
    order = a - b;
  } else if (w.column.name === 'timestamp' && typeof w.value === 'string' && Number.isFinite(Date.parse(w.value))) {
    order = Date.parse(String(v)) - Date.parse(w.value);
  } else {
    const [x, y] = [String(v), String(w.value)];
    order = x < y ? -1 : x > y ? 1 : 0;
  }
  switch (w.op) {
    case '=': return order === 0;
    case '!=': return order !== 0;
    case '<': return order < 0;
    case '<=': return order <= 0;
    case '>': return order > 0;
    case '>=': return order >= 0;
  }
}
