/** A SQL insight's answer as its display (the SQL page and dashboard tiles); no editor code, so tiles stay small. */
import { TimeSeriesChart } from './time-series-chart';
import { numberText } from '../lib/format';
import { boldNumberOf, cellText, chartOf, type SqlDisplay, type SqlResult } from '../lib/sql-insight';

/** A SQL answer as its display: a table, a line or bar chart of the numeric columns, or the first number. */
export function SqlAnswer({ result, display, stale = false, compact = false }: { result: SqlResult; display: SqlDisplay; stale?: boolean; compact?: boolean }) {
  const chart = display === 'ActionsLineGraph' || display === 'ActionsBar' ? chartOf(result) : null;
  const number = display === 'BoldNumber' ? boldNumberOf(result) : null;
  return (
    <div class={stale ? 'insight-result stale' : 'insight-result'} data-testid="sql-result" data-stale={String(stale)}>
      {chart ? (
        <TimeSeriesChart testId="sql-chart" labels={chart.labels} series={chart.series} display={display === 'ActionsBar' ? 'bar' : 'line'} compact={compact} xLabel={result.columns[0]} height={compact ? 220 : undefined} />
      ) : number ? (
        <p class="bold-number" data-testid="sql-number"><strong>{numberText(number.value)}</strong> <span class="muted">{number.label}</span></p>
      ) : (
        <>
          {display !== 'ActionsTable' && <p class="muted">Nothing to draw as {display === 'BoldNumber' ? 'a number' : 'a chart'}: shown as a table.</p>}
          <div class="scroll-x">
            <table class="list" data-testid="sql-table">
              <thead><tr>{result.columns.map((c) => <th key={c}>{c}</th>)}</tr></thead>
              <tbody>{result.results.map((row, r) => <tr key={r}>{row.map((v, c) => <td key={c}>{cellText(v)}</td>)}</tr>)}</tbody>
            </table>
          </div>
          <p class="muted small">{result.results.length} rows</p>
        </>
      )}
    </div>
  );
}
