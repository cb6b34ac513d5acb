// The SQL editor's pure parts (src/console/app/lib/sql-insight.ts).
import t from 'tap';
import { hogqlFunctionNames } from '../../src/domain/hogql/function-names.js';
import { aggregateOf } from '../../src/domain/hogql/aggregate-functions.js';
import { scalarFunction } from '../../src/domain/hogql/functions.js';
import { functionCompletions, boldNumberOf, chartOf, completionSchema, errorPosition, pushHistory, sqlOfQuery, visualizationQuery } from '../../src/console/app/lib/sql-insight.js';

t.test('completion knows the tables, event properties after properties. and person ones after person.properties.', async (t) => {
  const schema = completionSchema(['$browser', 'plan'], ['email']);
  t.ok((schema.events as string[]).includes('timestamp'));
  t.same(schema.properties, ['$browser', 'plan']);
  t.same(schema.person, { properties: ['email'] });
});

t.test('an error names its position; a message without one has none', async (t) => {
  t.equal(errorPosition('Unexpected character "#" at position 17.'), 17);
  t.equal(errorPosition('Unknown table "evnts".'), null);
});

t.test('a result as a chart: first column on x, numeric columns as series', async (t) => {
  const r = { columns: ['day', 'views', 'browser', 'users'], results: [['2024-03-01', 5, 'Chrome', 2], ['2024-03-02', null, 'Safari', 3]] };
  t.same(chartOf(r), { labels: ['2024-03-01', '2024-03-02'], series: [{ label: 'views', data: [5, null] }, { label: 'users', data: [2, 3] }] });
  t.equal(chartOf({ columns: ['a', 'b'], results: [['x', 'y']] }), null, 'nothing numeric to draw');
  t.same(boldNumberOf({ columns: ['name', 'count()'], results: [['all', 42]] }), { label: 'count()', value: 42 });
  t.equal(boldNumberOf({ columns: ['x'], results: [] }), null);
});

t.test('history: newest first, once each, bounded', async (t) => {
  t.same(pushHistory(['b', 'a'], ' a '), ['a', 'b']);
  t.same(pushHistory([], '  '), []);
  t.equal(pushHistory(Array.from({ length: 30 }, (_, i) => `q${i}`), 'new', 20).length, 20);
});

t.test('saved as a DataVisualizationNode and read back', async (t) => {
  const q = visualizationQuery('SELECT 1', 'ActionsBar');
  t.same(q, { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'SELECT 1' }, display: 'ActionsBar' });
  t.same(sqlOfQuery(q), { query: 'SELECT 1', display: 'ActionsBar' });
  t.same(sqlOfQuery({ kind: 'HogQLQuery', query: 'SELECT 2' }), { query: 'SELECT 2', display: 'ActionsTable' });
  t.equal(sqlOfQuery({ kind: 'InsightVizNode', source: { kind: 'TrendsQuery' } }), null);
  t.equal(sqlOfQuery(null), null);
});

t.test('function completion: what the evaluator runs, with its call opened', async (t) => {
  const names = hogqlFunctionNames();
  for (const name of ['toStartOfDay', 'dateDiff', 'count', 'countIf', 'uniqIf', 'quantile']) t.ok(names.includes(name), name);
  for (const refused of ['sleep', 'arrayJoin', 'file']) t.notOk(names.includes(refused), `${refused} is refused by the evaluator, so not offered`);
  t.same(names.filter((n) => n.startsWith('$')), [], "not the planner's own helpers");
  t.same(names.filter((n) => scalarFunction(n) === undefined && aggregateOf(n, false) === undefined), [], 'every name offered runs');
  t.same(functionCompletions(['toStartOfDay']), [{ label: 'toStartOfDay', type: 'function' }]);
});
