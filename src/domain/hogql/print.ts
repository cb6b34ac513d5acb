/**
 * HogQL text of a syntax tree: the names of unaliased result columns (`count()`, `toStartOfDay(timestamp)`) and
 * the query as Quill ran it (the answer's `hogql`, after placeholders and default limits).
 */
import type { Expr, Query, TableRef } from './ast.js';

const INFIX: Record<string, string> = {
  equals: '=', notEquals: '!=', less: '<', greater: '>', lessOrEquals: '<=', greaterOrEquals: '>=', plus: '+', minus: '-',
  multiply: '*', divide: '/', modulo: '%', like: 'LIKE', ilike: 'ILIKE', notLike: 'NOT LIKE', notILike: 'NOT ILIKE', in: 'IN',
  notIn: 'NOT IN', match: '=~',
};

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function printIdentifier(name: string): string {
  return IDENT.test(name) ? name : `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

export function printString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

export function printExpr(e: Expr): string {
  switch (e.k) {
    case 'const':
      return e.value === null ? 'NULL' : typeof e.value === 'string' ? printString(e.value) : String(e.value);
    case 'field':
      return e.chain.map(printIdentifier).join('.');
    case 'star':
      return e.table ? `${printIdentifier(e.table)}.*` : '*';
    case 'alias':
      return `${printExpr(e.expr)} AS ${printIdentifier(e.alias)}`;
    case 'placeholder':
      return `{${e.chain.join('.')}}`;
    case 'subquery':
      return `(${printQuery(e.query)})`;
    case 'filter':
      return '{filters}';
    case 'call': {
      const args = e.args.map(printExpr);
      if (INFIX[e.name] && args.length === 2) return `${wrap(e.args[0]!, args[0]!)} ${INFIX[e.name]} ${wrap(e.args[1]!, args[1]!)}`;
      if (e.name === 'and' || e.name === 'or') return e.args.map((a, i) => wrap(a, args[i]!)).join(` ${e.name.toUpperCase()} `);
      if (e.name === 'not') return `NOT ${wrap(e.args[0]!, args[0]!)}`;
      if (e.name === 'negate') return `-${wrap(e.args[0]!, args[0]!)}`;
      if (e.name === 'tuple') return `(${args.join(', ')})`;
      if (e.name === 'array') return `[${args.join(', ')}]`;
      const params = e.params ? `(${e.params.map(printExpr).join(', ')})` : '';
      return `${e.name}${params}(${e.distinct ? 'DISTINCT ' : ''}${args.join(', ')})`;
    }
  }
}

/** Parenthesises operands that are themselves operators. */
function wrap(e: Expr, text: string): string {
  return e.k === 'call' && (INFIX[e.name] || e.name === 'and' || e.name === 'or' || e.name === 'not') ? `(${text})` : text;
}

function printRef(r: TableRef): string {
  const base = r.query ? `(${printQuery(r.query)})` : printIdentifier(r.table!);
  return r.alias ? `${base} AS ${printIdentifier(r.alias)}` : base;
}

export function printQuery(q: Query): string {
  if (q.k === 'union') return q.selects.map(printQuery).join(' UNION ALL ');
  const parts: string[] = [];
  if (q.ctes.length > 0) parts.push(`WITH ${q.ctes.map((c) => `${printIdentifier(c.name)} AS (${printQuery(c.query)})`).join(', ')}`);
  parts.push(`SELECT ${q.distinct ? 'DISTINCT ' : ''}${q.columns.map(printExpr).join(', ')}`);
  if (q.from) {
    parts.push(`FROM ${printRef(q.from)}`);
    for (const j of q.joins) parts.push(`${j.kind} JOIN ${printRef(j.ref)}${j.on ? ` ON ${printExpr(j.on)}` : ''}`);
  }
  if (q.where) parts.push(`WHERE ${printExpr(q.where)}`);
  if (q.groupBy.length > 0) parts.push(`GROUP BY ${q.groupBy.map(printExpr).join(', ')}`);
  if (q.having) parts.push(`HAVING ${printExpr(q.having)}`);
  if (q.orderBy.length > 0) parts.push(`ORDER BY ${q.orderBy.map((o) => `${printExpr(o.expr)} ${o.desc ? 'DESC' : 'ASC'}${o.nullsFirst ? ' NULLS FIRST' : ''}`).join(', ')}`);
  if (q.limit) parts.push(`LIMIT ${printExpr(q.limit)}`);
  if (q.offset) parts.push(`OFFSET ${printExpr(q.offset)}`);
  return parts.join(' ');
}
