/**
 * Rows from ClickHouse in the form Quill's own engine answers (src/domain/hogql/values.ts `outputValue`): the
 * printer's outer SELECT gives instants as epoch milliseconds, dates as day numbers, booleans as 0/1 and
 * properties as their raw JSON (src/domain/hogql/clickhouse-printer.ts `outputColumn`). Pure.
 */
import type { ColumnInfo } from '../../domain/hogql/plan.js';
import { DAY_MS, dateText, dateTimeText, type Type } from '../../domain/hogql/values.js';

function jsonValue(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    const parsed = JSON.parse(v) as unknown;
    // An object or array property is answered as its JSON text, as Quill's engine does.
    return parsed !== null && typeof parsed === 'object' ? JSON.stringify(parsed) : parsed;
  } catch {
    return v;
  }
}

function numeric(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : null;
}

export function answerValue(v: unknown, type: Type | undefined, timeZone: string): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'DateTime': {
      const ms = numeric(v);
      return ms === null ? null : dateTimeText(ms, timeZone);
    }
    case 'Date': {
      const days = numeric(v);
      return days === null ? null : dateText(days * DAY_MS);
    }
    case 'Bool':
      return v === 1 || v === true || v === '1';
    case 'Int':
    case 'Float':
    case 'Interval':
      return numeric(v);
    case 'JSON':
      return jsonValue(v);
    default:
      if (typeof v === 'number') return Number.isFinite(v) ? v : null;
      return v;
  }
}

export function answerRows(data: unknown[][], columns: readonly ColumnInfo[], timeZone: string): unknown[][] {
  return data.map((row) => row.map((v, i) => answerValue(v, columns[i]?.type, timeZone)));
}
