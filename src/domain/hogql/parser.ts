/**
 * A recursive-descent parser for the SELECT statements of HogQL (PostHog's SQL dialect, ClickHouse's grammar):
 * `[WITH name AS (…)] SELECT [DISTINCT] … [FROM table|(subquery) [AS a] [[INNER|LEFT] JOIN … ON …]] [WHERE …]
 * [GROUP BY …] [HAVING …] [ORDER BY … [ASC|DESC] [NULLS FIRST|LAST]] [LIMIT n [OFFSET m] | LIMIT m, n] [OFFSET m]`,
 * joined by `UNION ALL`. Only SELECT parses: no statement that writes can reach the engine. Constructs of the dialect
 * Quill does not support (window functions, ARRAY JOIN, LIMIT BY, SETTINGS, lambdas…) are refused by name here,
 * so the planner never sees them.
 *
 * Operator precedence follows ClickHouse: `OR` < `AND` < `NOT` < comparisons (`=`, `<`, `LIKE`, `IN`, `IS NULL`,
 * `BETWEEN`) < `+ - ||` < `* / %` < unary minus < `[…]` and `.` access.
 *
 * Nesting is bounded (MAX_NESTING): the parser counts its own recursion and refuses before the stack could run out,
 * and the finished tree is measured too (a chain such as `1+1+…+1` parses in a loop but makes a left-deep tree
 * that every later walk, printer, planner, binder and evaluator, descends recursively).
 */
import { hogqlError, unsupported } from './errors.js';
import type { Expr, Join, JoinKind, OrderItem, Query, Select, TableRef } from './ast.js';
import { call, callOf, constant } from './ast.js';
import { tokenize, type Token } from './lexer.js';

const RESERVED = new Set([
  'SELECT', 'FROM', 'WHERE', 'PREWHERE', 'GROUP', 'BY', 'HAVING', 'ORDER', 'LIMIT', 'OFFSET', 'AS', 'AND', 'OR', 'NOT', 'IN',
  'LIKE', 'ILIKE', 'IS', 'NULL', 'BETWEEN', 'JOIN', 'INNER', 'LEFT', 'RIGHT', 'FULL', 'OUTER', 'CROSS', 'ON', 'USING',
  'DISTINCT', 'ASC', 'DESC', 'UNION', 'ALL', 'CASE', 'WHEN', 'THEN', 'ELSE', 'END', 'WITH', 'SETTINGS', 'FORMAT', 'INTO',
  'ARRAY', 'WINDOW', 'OVER', 'SAMPLE', 'FINAL', 'GLOBAL', 'ANY', 'SEMI', 'ANTI', 'ASOF', 'NULLS', 'QUALIFY', 'EXCEPT',
  'INTERSECT', 'ASCENDING', 'DESCENDING', 'TOP', 'PASTE',
]);

/** Keywords that start a statement which is not a query: named in the refusal. */
const WRITES = new Set(['INSERT', 'UPDATE', 'DELETE', 'ALTER', 'DROP', 'CREATE', 'TRUNCATE', 'RENAME', 'OPTIMIZE', 'ATTACH', 'DETACH', 'GRANT', 'REVOKE', 'SET', 'USE', 'KILL', 'SYSTEM', 'EXCHANGE', 'REPLACE', 'UPSERT', 'MERGE', 'COPY', 'SHOW', 'DESCRIBE', 'DESC', 'EXPLAIN', 'CHECK']);

const INTERVAL_UNITS: Record<string, string> = {
  SECOND: 'Second', SECONDS: 'Second', MINUTE: 'Minute', MINUTES: 'Minute', HOUR: 'Hour', HOURS: 'Hour', DAY: 'Day', DAYS: 'Day',
  WEEK: 'Week', WEEKS: 'Week', MONTH: 'Month', MONTHS: 'Month', QUARTER: 'Quarter', QUARTERS: 'Quarter', YEAR: 'Year', YEARS: 'Year',
};

const CAST_TYPES: Record<string, string> = {
  STRING: 'toString', TEXT: 'toString', VARCHAR: 'toString', FLOAT: 'toFloat', FLOAT32: 'toFloat', FLOAT64: 'toFloat', DOUBLE: 'toFloat',
  INT: 'toInt', INTEGER: 'toInt', INT8: 'toInt', INT16: 'toInt', INT32: 'toInt', INT64: 'toInt', UINT8: 'toInt', UINT16: 'toInt', UINT32: 'toInt',
  UINT64: 'toInt', DATE: 'toDate', DATETIME: 'toDateTime', DATETIME64: 'toDateTime', BOOL: 'toBool', BOOLEAN: 'toBool', UUID: 'toUUID',
};

/**
 * The deepest nesting a query may have: levels of the parser's recursion (parentheses, function calls, arrays,
 * subqueries, NOT, unary minus…) and levels of the finished syntax tree (every expression and query node on the way
 * from the root to a leaf; `a+b+c` is two levels of plus() over its operands).
 *
 * ClickHouse's own defaults are max_parser_depth 1000 and max_ast_depth 1000; ours is lower because each level costs
 * JavaScript stack in every recursive stage. Queries run in the shard workers, whose threads get Node's default 4 MB
 * stack (src/front/worker-pool.ts sets no resourceLimits). Measured there (Node 20) without this bound: the parser
 * overflowed at about 3,400 nested parentheses before its code was optimised, the structured clone that carries a plan
 * to the other workers at about 4,900 tree levels (a failed clone left the caller waiting 60 s for an answer), the
 * whole pipeline at 5,000 to 7,000; on the main thread's 1 MB stack the parser overflowed at about 830. 256 levels
 * leave more than a tenfold margin in a worker and a threefold one even on the main thread, and real queries stay far
 * below them: AND, OR, CASE and IN lists are flat, and only a chain of `+`, `*` or `||` or nested calls go deep.
 */
export const MAX_NESTING = 256;

function tooDeep(): never {
  return hogqlError(`The query is nested too deeply (more than ${MAX_NESTING} levels).`);
}

/** Parses one SELECT query (possibly a UNION ALL of several). */
export function parseQuery(text: string): Query {
  const q = new Parser(tokenize(text)).query();
  refuseDeepTree(q);
  return q;
}

/** Parses one expression (EventsQuery `select` and `where` items). */
export function parseExpression(text: string): Expr {
  const p = new Parser(tokenize(text));
  const e = p.expressionWithAlias();
  p.expectEnd();
  refuseDeepTree(e);
  return e;
}

/** Parses one ORDER BY item (`timestamp DESC`: EventsQuery `orderBy`). */
export function parseOrderExpression(text: string): OrderItem {
  const p = new Parser(tokenize(text));
  const item = p.orderItem();
  p.expectEnd();
  refuseDeepTree(item.expr);
  return item;
}

/**
 * Refuses a tree deeper than MAX_NESTING levels (query and expression nodes from the root to the deepest leaf),
 * measured without recursion, so that no recursive stage after the parser can overflow on it.
 */
export function refuseDeepTree(root: Query | Expr): void {
  const nodes: (Query | Expr | null | undefined)[] = [root];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop()!;
    if (!node) continue;
    if (depth > MAX_NESTING) tooDeep();
    const below = (child: Query | Expr | null | undefined) => {
      nodes.push(child);
      depths.push(depth + 1);
    };
    switch (node.k) {
      case 'union':
        node.selects.forEach(below);
        break;
      case 'select':
        for (const cte of node.ctes) below(cte.query);
        node.columns.forEach(below);
        below(node.from?.query);
        for (const join of node.joins) {
          below(join.ref.query);
          below(join.on);
        }
        below(node.where);
        node.groupBy.forEach(below);
        below(node.having);
        for (const item of node.orderBy) below(item.expr);
        below(node.limit);
        below(node.offset);
        break;
      case 'call':
        node.args.forEach(below);
        node.params?.forEach(below);
        break;
      case 'alias':
        below(node.expr);
        break;
      case 'subquery':
        below(node.query);
        break;
      default:
    }
  }
}

class Parser {
  private i = 0;
  /** Recursive productions entered and not yet left (see MAX_NESTING). */
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  /** Entering a production that may recurse: refused past MAX_NESTING, before the stack can run out. */
  private enter(): void {
    if (++this.depth > MAX_NESTING) tooDeep();
  }

  private leave(): void {
    this.depth--;
  }

  query(): Query {
    const first = this.peek();
    if (first.kind === 'ident' && WRITES.has(first.text.toUpperCase()) && !this.isKeyword('WITH')) {
      hogqlError(`Only SELECT queries are supported: ${first.text.toUpperCase()} statements cannot run here.`);
    }
    if (!this.isKeyword('SELECT') && !this.isKeyword('WITH') && !this.isOp('(')) {
      hogqlError(`A query must start with SELECT (found "${first.text || 'the end of the query'}").`);
    }
    const q = this.union();
    this.expectEnd();
    return q;
  }

  expectEnd(): void {
    while (this.isOp(';')) this.i++;
    const t = this.peek();
    if (t.kind !== 'end') {
      if (t.kind === 'ident' && WRITES.has(t.text.toUpperCase())) hogqlError(`Only one SELECT query can run: found ${t.text.toUpperCase()} after it.`);
      if (t.kind === 'ident' && ['SETTINGS', 'FORMAT', 'INTO'].includes(t.text.toUpperCase())) unsupported(t.text.toUpperCase());
      hogqlError(`Unexpected "${t.text}" at position ${t.at}.`);
    }
  }

  // ---- token helpers

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'end') this.i++;
    return t;
  }

  private isKeyword(word: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'ident' && t.text.toUpperCase() === word;
  }

  private acceptKeyword(word: string): boolean {
    if (!this.isKeyword(word)) return false;
    this.i++;
    return true;
  }

  private expectKeyword(word: string): void {
    if (!this.acceptKeyword(word)) this.fail(`Expected ${word}`);
  }

  private isOp(op: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'op' && t.text === op;
  }

  private acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.i++;
    return true;
  }

  private expectOp(op: string): void {
    if (!this.acceptOp(op)) this.fail(`Expected "${op}"`);
  }

  private fail(what: string): never {
    const t = this.peek();
    return hogqlError(`${what} at position ${t.at}, found ${t.kind === 'end' ? 'the end of the query' : `"${t.text}"`}.`);
  }

  /** A name (bare, quoted or backquoted) that is not a reserved keyword. */
  private name(what: string): string {
    const t = this.peek();
    if (t.kind === 'quoted') return this.next().text;
    if (t.kind === 'ident' && !RESERVED.has(t.text.toUpperCase())) return this.next().text;
    return this.fail(`Expected ${what}`);
  }

  // ---- statements

  /** Every subquery (parenthesised, in FROM, JOIN, IN, WITH or an expression) comes through here. */
  private union(): Query {
    this.enter();
    const selects: Query[] = [this.selectOrParenthesised()];
    for (;;) {
      if (this.acceptKeyword('UNION')) {
        if (this.acceptKeyword('ALL')) {
          selects.push(this.selectOrParenthesised());
          continue;
        }
        unsupported('UNION without ALL (UNION DISTINCT)', 'Use UNION ALL, with DISTINCT in an outer query.');
      }
      if (this.isKeyword('EXCEPT') || this.isKeyword('INTERSECT')) unsupported(this.peek().text.toUpperCase());
      break;
    }
    this.leave();
    return selects.length === 1 ? selects[0]! : { k: 'union', selects };
  }

  private selectOrParenthesised(): Query {
    if (this.acceptOp('(')) {
      const q = this.union();
      this.expectOp(')');
      return q;
    }
    return this.select();
  }

  private select(): Select {
    const ctes: Select['ctes'] = [];
    if (this.acceptKeyword('WITH')) {
      do {
        const named = (this.peek().kind === 'ident' || this.peek().kind === 'quoted') && this.isKeyword('AS', 1) && this.isOp('(', 2);
        if (!named) unsupported('WITH <expression> AS <name> (scalar WITH)', 'Name subqueries with WITH <name> AS (SELECT …).');
        const name = this.name('a subquery name');
        this.expectKeyword('AS');
        this.expectOp('(');
        const query = this.union();
        this.expectOp(')');
        ctes.push({ name, query });
      } while (this.acceptOp(','));
    }
    this.expectKeyword('SELECT');
    const distinct = this.acceptKeyword('DISTINCT');
    if (distinct && this.isKeyword('ON')) unsupported('SELECT DISTINCT ON');
    if (this.isKeyword('TOP')) unsupported('SELECT TOP', 'Use LIMIT.');
    const columns: Expr[] = [];
    do columns.push(this.column());
    while (this.acceptOp(','));
    const s: Select = { k: 'select', ctes, distinct, columns, from: null, joins: [], where: null, groupBy: [], having: null, orderBy: [], limit: null, offset: null };
    if (this.acceptKeyword('FROM')) {
      s.from = this.tableRef();
      this.joins(s);
    }
    if (this.isKeyword('ARRAY') || (this.isKeyword('LEFT') && this.isKeyword('ARRAY', 1))) unsupported('ARRAY JOIN');
    const prewhere = this.acceptKeyword('PREWHERE') ? this.expression() : null;
    if (this.acceptKeyword('WHERE')) s.where = this.expression();
    if (prewhere) s.where = s.where ? call('and', prewhere, s.where) : prewhere;
    if (this.acceptKeyword('GROUP')) {
      this.expectKeyword('BY');
      if (this.isKeyword('ALL')) unsupported('GROUP BY ALL', 'List the grouping expressions.');
      do s.groupBy.push(this.expression());
      while (this.acceptOp(','));
      if (this.isKeyword('WITH')) unsupported(`GROUP BY … WITH ${this.peek(1).text.toUpperCase()}`);
    }
    if (this.acceptKeyword('HAVING')) s.having = this.expression();
    if (this.isKeyword('WINDOW')) unsupported('WINDOW (window functions)');
    if (this.isKeyword('QUALIFY')) unsupported('QUALIFY');
    if (this.acceptKeyword('ORDER')) {
      this.expectKeyword('BY');
      do s.orderBy.push(this.orderItem());
      while (this.acceptOp(','));
    }
    if (this.acceptKeyword('LIMIT')) {
      const first = this.expression();
      if (this.acceptOp(',')) {
        s.offset = first;
        s.limit = this.expression();
      } else {
        s.limit = first;
        if (this.acceptKeyword('OFFSET')) s.offset = this.expression();
      }
      if (this.isKeyword('BY')) unsupported('LIMIT … BY');
      if (this.isKeyword('WITH')) unsupported('LIMIT … WITH TIES');
    }
    if (this.acceptKeyword('OFFSET')) {
      s.offset = this.expression();
      this.acceptKeyword('ROWS') || this.acceptKeyword('ROW');
      if (this.isKeyword('FETCH')) unsupported('OFFSET … FETCH', 'Use LIMIT.');
    }
    if (this.isKeyword('SETTINGS')) unsupported('SETTINGS');
    if (this.isKeyword('FORMAT')) unsupported('FORMAT');
    if (this.isKeyword('INTO')) unsupported('INTO OUTFILE');
    return s;
  }

  private column(): Expr {
    if (this.acceptOp('*')) return { k: 'star' };
    const t = this.peek();
    if ((t.kind === 'ident' || t.kind === 'quoted') && this.isOp('.', 1) && this.isOp('*', 2)) {
      this.i += 3;
      return { k: 'star', table: t.text };
    }
    return this.expressionWithAlias();
  }

  expressionWithAlias(): Expr {
    const expr = this.expression();
    if (this.acceptKeyword('AS')) return { k: 'alias', expr, alias: this.name('an alias after AS') };
    const t = this.peek();
    if (t.kind === 'quoted' || (t.kind === 'ident' && !RESERVED.has(t.text.toUpperCase()))) return { k: 'alias', expr, alias: this.next().text };
    return expr;
  }

  orderItem(): OrderItem {
    const expr = this.expression();
    let desc = false;
    if (this.acceptKeyword('DESC') || this.acceptKeyword('DESCENDING')) desc = true;
    else if (!this.acceptKeyword('ASC')) this.acceptKeyword('ASCENDING');
    let nullsFirst: boolean | undefined;
    if (this.acceptKeyword('NULLS')) {
      if (this.acceptKeyword('FIRST')) nullsFirst = true;
      else if (this.acceptKeyword('LAST')) nullsFirst = false;
      else this.fail('Expected FIRST or LAST after NULLS');
    }
    if (this.isKeyword('WITH')) unsupported('ORDER BY … WITH FILL');
    if (this.isKeyword('COLLATE')) unsupported('ORDER BY … COLLATE');
    return nullsFirst === undefined ? { expr, desc } : { expr, desc, nullsFirst };
  }

  private tableRef(): TableRef {
    let ref: TableRef;
    if (this.acceptOp('(')) {
      if (!this.isKeyword('SELECT') && !this.isKeyword('WITH') && !this.isOp('(')) this.fail('Expected a subquery');
      ref = { query: this.union() };
      this.expectOp(')');
    } else {
      const name = this.name('a table name');
      if (this.isOp('(')) unsupported(`The table function ${name}()`);
      if (this.isOp('.')) unsupported(`The table ${name}.${this.peek(1).text}`, 'Quill answers events, persons, person_distinct_ids and groups.');
      ref = { table: name };
    }
    if (this.isKeyword('FINAL')) unsupported('FINAL');
    if (this.isKeyword('SAMPLE')) unsupported('SAMPLE');
    if (this.acceptKeyword('AS')) ref.alias = this.name('an alias after AS');
    else {
      const t = this.peek();
      if (t.kind === 'quoted' || (t.kind === 'ident' && !RESERVED.has(t.text.toUpperCase()))) ref.alias = this.next().text;
    }
    if (this.isKeyword('FINAL')) unsupported('FINAL');
    if (this.isKeyword('SAMPLE')) unsupported('SAMPLE');
    return ref;
  }

  private joins(s: Select): void {
    for (;;) {
      if (this.acceptOp(',')) {
        s.joins.push({ kind: 'CROSS', ref: this.tableRef(), on: null });
        continue;
      }
      const kind = this.joinKind();
      if (kind === null) return;
      const ref = this.tableRef();
      const join: Join = { kind, ref, on: null };
      if (this.acceptKeyword('ON')) join.on = this.expression();
      else if (this.acceptKeyword('USING')) {
        const parenthesised = this.acceptOp('(');
        const names: string[] = [];
        do names.push(this.name('a column name'));
        while (this.acceptOp(','));
        if (parenthesised) this.expectOp(')');
        const left = s.joins.length === 0 ? s.from! : s.joins[s.joins.length - 1]!.ref;
        const leftName = left.alias ?? left.table;
        const rightName = ref.alias ?? ref.table;
        if (!leftName || !rightName) unsupported('JOIN … USING with a subquery that has no alias');
        const eqs = names.map((n) => call('equals', { k: 'field', chain: [leftName, n] }, { k: 'field', chain: [rightName, n] }));
        join.on = eqs.length === 1 ? eqs[0]! : callOf('and', eqs);
      } else if (kind !== 'CROSS') this.fail('Expected ON or USING after the joined table');
      s.joins.push(join);
    }
  }

  private joinKind(): JoinKind | null {
    const start = this.i;
    this.acceptKeyword('GLOBAL');
    let kind: JoinKind | null = null;
    if (this.acceptKeyword('INNER')) kind = 'INNER';
    else if (this.acceptKeyword('LEFT')) kind = 'LEFT';
    else if (this.acceptKeyword('RIGHT')) kind = 'RIGHT';
    else if (this.acceptKeyword('FULL')) kind = 'FULL';
    else if (this.acceptKeyword('CROSS')) kind = 'CROSS';
    if (kind === 'LEFT' || kind === 'RIGHT' || kind === 'FULL') this.acceptKeyword('OUTER');
    for (const strictness of ['ANY', 'ALL', 'SEMI', 'ANTI', 'ASOF']) {
      if (this.isKeyword(strictness)) unsupported(`${strictness} JOIN`);
    }
    if (this.acceptKeyword('JOIN')) return kind ?? 'INNER';
    if (this.isKeyword('ARRAY')) unsupported('ARRAY JOIN');
    this.i = start;
    return null;
  }

  // ---- expressions

  /**
   * Every nested expression (in parentheses, arrays, function arguments, CASE, CAST, `[index]`, `? :`) comes
   * through here; so do all cycles of the grammar except NOT, unary minus and INTERVAL, counted where they recurse.
   */
  expression(): Expr {
    this.enter();
    let e = this.or();
    if (this.acceptOp('?')) {
      const then = this.expression();
      this.expectOp(':');
      const otherwise = this.expression();
      e = call('if', e, then, otherwise);
    }
    this.leave();
    return e;
  }

  private or(): Expr {
    const parts = [this.and()];
    while (this.acceptKeyword('OR')) parts.push(this.and());
    return parts.length === 1 ? parts[0]! : callOf('or', parts);
  }

  private and(): Expr {
    const parts = [this.not()];
    while (this.acceptKeyword('AND')) parts.push(this.not());
    return parts.length === 1 ? parts[0]! : callOf('and', parts);
  }

  private not(): Expr {
    if (this.acceptKeyword('NOT')) {
      this.enter();
      const e = call('not', this.not());
      this.leave();
      return e;
    }
    return this.comparison();
  }

  private comparison(): Expr {
    const left = this.additive();
    const t = this.peek();
    if (t.kind === 'op') {
      const ops: Record<string, string> = { '=': 'equals', '==': 'equals', '!=': 'notEquals', '<>': 'notEquals', '<': 'less', '>': 'greater', '<=': 'lessOrEquals', '>=': 'greaterOrEquals', '=~': 'match' };
      if (ops[t.text]) {
        this.i++;
        return call(ops[t.text]!, left, this.additive());
      }
      if (t.text === '!~') {
        this.i++;
        return call('not', call('match', left, this.additive()));
      }
      if (t.text === '<=>') unsupported('The <=> operator');
      return left;
    }
    if (t.kind !== 'ident') return left;
    const negated = this.isKeyword('NOT') && (this.isKeyword('LIKE', 1) || this.isKeyword('ILIKE', 1) || this.isKeyword('IN', 1) || this.isKeyword('BETWEEN', 1));
    if (negated) this.i++;
    if (this.acceptKeyword('LIKE')) return call(negated ? 'notLike' : 'like', left, this.additive());
    if (this.acceptKeyword('ILIKE')) return call(negated ? 'notILike' : 'ilike', left, this.additive());
    if (this.acceptKeyword('GLOBAL')) {
      if (!this.isKeyword('IN') && !(this.isKeyword('NOT') && this.isKeyword('IN', 1))) this.fail('Expected IN after GLOBAL');
      const not = this.acceptKeyword('NOT');
      this.expectKeyword('IN');
      return call(not ? 'notIn' : 'in', left, this.inRight());
    }
    if (this.acceptKeyword('IN')) return call(negated ? 'notIn' : 'in', left, this.inRight());
    if (this.acceptKeyword('BETWEEN')) {
      const low = this.additive();
      this.expectKeyword('AND');
      const high = this.additive();
      return negated ? call('or', call('less', left, low), call('greater', left, high)) : call('and', call('greaterOrEquals', left, low), call('lessOrEquals', left, high));
    }
    if (this.acceptKeyword('IS')) {
      const not = this.acceptKeyword('NOT');
      if (this.acceptKeyword('DISTINCT')) unsupported('IS [NOT] DISTINCT FROM');
      this.expectKeyword('NULL');
      return call(not ? 'isNotNull' : 'isNull', left);
    }
    return left;
  }

  /** The right side of IN: a parenthesised list or subquery, or an expression (a tuple, an array). */
  private inRight(): Expr {
    if (this.isOp('(') && (this.isKeyword('SELECT', 1) || this.isKeyword('WITH', 1))) {
      this.i++;
      const query = this.union();
      this.expectOp(')');
      return { k: 'subquery', query };
    }
    if (this.acceptOp('(')) {
      const items: Expr[] = [];
      if (!this.isOp(')')) {
        do items.push(this.expression());
        while (this.acceptOp(','));
      }
      this.expectOp(')');
      return callOf('tuple', items);
    }
    return this.additive();
  }

  /**
   * `a + b - c || d`, left-deep: plus(minus(concat…)). The loop does not recurse, but each operator is one more
   * level of the tree, so a chain longer than MAX_NESTING is refused as it is read (the whole tree is measured
   * after parsing, refuseDeepTree).
   */
  private additive(): Expr {
    let left = this.multiplicative();
    for (let chain = 1; ; chain++) {
      if (this.acceptOp('+')) left = call('plus', left, this.multiplicative());
      else if (this.acceptOp('-')) left = call('minus', left, this.multiplicative());
      else if (this.acceptOp('||')) left = call('concat', left, this.multiplicative());
      else return left;
      if (chain >= MAX_NESTING) tooDeep();
    }
  }

  private multiplicative(): Expr {
    let left = this.unary();
    for (let chain = 1; ; chain++) {
      if (this.acceptOp('*')) left = call('multiply', left, this.unary());
      else if (this.acceptOp('/')) left = call('divide', left, this.unary());
      else if (this.acceptOp('%')) left = call('modulo', left, this.unary());
      else return left;
      if (chain >= MAX_NESTING) tooDeep();
    }
  }

  private unary(): Expr {
    const minus = this.acceptOp('-');
    if (!minus && !this.acceptOp('+')) return this.postfix();
    this.enter();
    const inner = this.unary();
    this.leave();
    if (!minus) return inner;
    if (inner.k === 'const' && typeof inner.value === 'number') return constant(-inner.value);
    return call('negate', inner);
  }

  private postfix(): Expr {
    let e = this.primary();
    for (let chain = 1; ; chain++) {
      if (chain > MAX_NESTING) tooDeep();
      if (this.acceptOp('[')) {
        const index = this.expression();
        this.expectOp(']');
        e = call('arrayElement', e, index);
        continue;
      }
      if (this.isOp('::')) unsupported('The :: cast operator', 'Use toString(), toFloat(), toInt() or toDate().');
      if (this.isOp('->')) unsupported('Lambda functions (->)');
      if (this.isOp('.') && this.peek(1).kind === 'number') {
        this.i++;
        e = call('tupleElement', e, constant(Number(this.next().text)));
        continue;
      }
      return e;
    }
  }

  private primary(): Expr {
    const t = this.peek();
    switch (t.kind) {
      case 'number':
        this.i++;
        return constant(t.text.startsWith('0x') || t.text.startsWith('0X') ? parseInt(t.text, 16) : Number(t.text));
      case 'string':
        this.i++;
        return constant(t.text);
      case 'placeholder':
        this.i++;
        if (!/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(t.text)) hogqlError(`Invalid placeholder {${t.text}} at position ${t.at}: only names such as {filters} are supported.`);
        return { k: 'placeholder', chain: t.text.split('.') };
      case 'quoted':
        return this.fieldOrCall();
      case 'op':
        if (t.text === '(') {
          this.i++;
          if (this.isKeyword('SELECT') || this.isKeyword('WITH')) {
            const query = this.union();
            this.expectOp(')');
            return { k: 'subquery', query };
          }
          const first = this.expression();
          if (this.acceptOp(',')) {
            const items = [first];
            do items.push(this.expression());
            while (this.acceptOp(','));
            this.expectOp(')');
            return callOf('tuple', items);
          }
          if (this.acceptKeyword('AS')) unsupported('Aliases inside expressions ((expr AS name))', 'Alias the select column instead.');
          this.expectOp(')');
          return first;
        }
        if (t.text === '[') {
          this.i++;
          const items: Expr[] = [];
          if (!this.isOp(']')) {
            do items.push(this.expression());
            while (this.acceptOp(','));
          }
          this.expectOp(']');
          return callOf('array', items);
        }
        if (t.text === '*') return this.fail('Unexpected "*"');
        return this.fail('Expected an expression');
      case 'ident': {
        const word = t.text.toUpperCase();
        if (word === 'NULL') {
          this.i++;
          return constant(null);
        }
        if (word === 'TRUE' || word === 'FALSE') {
          this.i++;
          return constant(word === 'TRUE');
        }
        if (word === 'CASE') return this.caseExpr();
        if (word === 'INTERVAL' && this.peek(1).kind !== 'op') return this.interval();
        if (word === 'CAST' && this.isOp('(', 1)) return this.cast();
        if (word === 'SELECT' || word === 'WITH') unsupported('A subquery without parentheses');
        if (word === 'EXTRACT' && this.isOp('(', 1)) unsupported('EXTRACT(… FROM …)', 'Use toYear(), toMonth(), toHour()….');
        if (RESERVED.has(word) && !this.isOp('(', 1)) return this.fail('Expected an expression');
        return this.fieldOrCall();
      }
      default:
        return this.fail('Expected an expression');
    }
  }

  private fieldOrCall(): Expr {
    const first = this.next();
    if (first.kind === 'ident' && this.isOp('(')) return this.functionCall(first.text);
    if (this.isOp('->')) unsupported('Lambda functions (->)');
    const chain = [first.text];
    while (this.isOp('.') && (this.peek(1).kind === 'ident' || this.peek(1).kind === 'quoted')) {
      this.i++;
      chain.push(this.next().text);
    }
    if (this.isOp('(')) unsupported(`Calling ${chain.join('.')}()`);
    return { k: 'field', chain };
  }

  private functionCall(name: string): Expr {
    this.expectOp('(');
    let args = this.callArguments();
    let params: Expr[] | undefined;
    let distinct = args.distinct;
    if (this.isOp('(')) {
      // Parametric aggregate: name(params)(args).
      this.i++;
      params = args.items;
      const second = this.callArguments();
      args = second;
      distinct = second.distinct;
    }
    if (this.isKeyword('OVER')) unsupported('Window functions (OVER)');
    const out: Expr = { k: 'call', name, args: args.items };
    if (params) out.params = params;
    if (distinct) out.distinct = true;
    return out;
  }

  /** Arguments up to the closing parenthesis (consumed). */
  private callArguments(): { items: Expr[]; distinct: boolean } {
    const distinct = this.acceptKeyword('DISTINCT');
    const items: Expr[] = [];
    if (this.acceptOp(')')) return { items, distinct };
    do {
      if (this.isOp('*') && (this.isOp(')', 1) || this.isOp(',', 1))) {
        this.i++;
        items.push({ k: 'star' });
      } else {
        const t = this.peek();
        if ((t.kind === 'ident' || t.kind === 'quoted') && this.isOp('->', 1)) unsupported('Lambda functions (->)');
        items.push(this.expression());
      }
    } while (this.acceptOp(','));
    this.expectOp(')');
    return { items, distinct };
  }

  private caseExpr(): Expr {
    this.expectKeyword('CASE');
    const subject = this.isKeyword('WHEN') ? null : this.expression();
    const args: Expr[] = [];
    while (this.acceptKeyword('WHEN')) {
      const when = this.expression();
      this.expectKeyword('THEN');
      args.push(subject ? call('equals', subject, when) : when, this.expression());
    }
    if (args.length === 0) this.fail('Expected WHEN');
    args.push(this.acceptKeyword('ELSE') ? this.expression() : constant(null));
    this.expectKeyword('END');
    return callOf('multiIf', args);
  }

  private interval(): Expr {
    this.enter();
    const e = this.intervalBody();
    this.leave();
    return e;
  }

  /** `INTERVAL INTERVAL 1 DAY DAY` recurses through additive() without passing expression(): counted in interval(). */
  private intervalBody(): Expr {
    this.expectKeyword('INTERVAL');
    const t = this.peek();
    if (t.kind === 'string') {
      // INTERVAL '7 day'
      this.i++;
      const m = /^\s*(-?\d+)\s+([A-Za-z]+)\s*$/.exec(t.text);
      const unit = m ? INTERVAL_UNITS[m[2]!.toUpperCase()] : undefined;
      if (!m || !unit) hogqlError(`Invalid interval '${t.text}' at position ${t.at}.`);
      return call(`toInterval${unit}`, constant(Number(m[1])));
    }
    const value = this.additive();
    const unitToken = this.next();
    const unit = INTERVAL_UNITS[unitToken.text.toUpperCase()];
    if (!unit) hogqlError(`Unknown interval unit "${unitToken.text}" at position ${unitToken.at}.`);
    return call(`toInterval${unit}`, value);
  }

  private cast(): Expr {
    this.next();
    this.expectOp('(');
    const value = this.expression();
    this.expectKeyword('AS');
    const typeToken = this.next();
    let typeName = typeToken.text.toUpperCase();
    if (typeName === 'NULLABLE' && this.acceptOp('(')) {
      typeName = this.next().text.toUpperCase();
      this.expectOp(')');
    }
    // DateTime64(6, 'UTC') and the like: the parameters do not change what Quill computes.
    if (this.acceptOp('(')) {
      let depth = 1;
      while (depth > 0) {
        const t = this.next();
        if (t.kind === 'end') this.fail('Expected ")"');
        if (t.kind === 'op' && t.text === '(') depth++;
        if (t.kind === 'op' && t.text === ')') depth--;
      }
    }
    this.expectOp(')');
    const fn = CAST_TYPES[typeName];
    if (!fn) unsupported(`CAST to ${typeToken.text}`);
    return call(fn, value);
  }
}
