/**
 * A time-series chart drawn by uPlot (canvas): lines, or bars grouped per bucket. The x axis is the bucket index,
 * labelled with the answer's own labels (already in the project's time zone). A click picks the nearest bucket and
 * the series nearest the pointer. The wrapper carries `data-points` and `data-series`, read from the chart's own
 * data once drawn, so a reader (or a test) sees what the chart holds.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { stackOf } from '../lib/stack';

export interface ChartSeries {
  label: string;
  data: (number | null)[];
}

export const PALETTE = ['#1d4aff', '#f04f58', '#42827e', '#ce0e74', '#f14f0d', '#8e44ad', '#30d5c8', '#6a6a6a', '#e6a700', '#2e86de'];

/** Grouped bars: series `s` of `n` takes the s-th slice of 80 % of each bucket. */
function groupedBars(s: number, n: number): uPlot.Series.PathBuilder {
  const width = 0.8 / n;
  return uPlot.paths.bars!({
    disp: {
      x0: { unit: 1, values: (u) => (u.data[0] as number[]).map((x) => x - 0.4 + s * width) },
      size: { unit: 1, values: (u) => (u.data[0] as number[]).map(() => width) },
    },
  });
}

function stackedBars(y0: number[], y1: number[]): uPlot.Series.PathBuilder {
  return uPlot.paths.bars!({
    disp: {
      x0: { unit: 1, values: (u) => (u.data[0] as number[]).map((x) => x - 0.4) },
      size: { unit: 1, values: (u) => (u.data[0] as number[]).map(() => 0.8) },
      y0: { unit: 1, values: () => y0 },
      y1: { unit: 1, values: () => y1 },
    },
  });
}

export function TimeSeriesChart(props: {
  labels: string[];
  series: ChartSeries[];
  display: 'line' | 'bar' | 'stacked';
  height?: number;
  /** x values are timestamps (seconds) instead of bucket indexes (the health page). */
  time?: boolean;
  x?: number[];
  onPointClick?(seriesIndex: number, dataIndex: number): void;
  testId?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const click = useRef(props.onPointClick);
  click.current = props.onPointClick;

  useEffect(() => {
    const el = host.current!;
    const n = props.series.length;
    const xs = props.x ?? props.labels.map((_, i) => i);
    const stack = props.display === 'stacked' ? stackOf(props.series) : null;
    const bars = props.display !== 'line';
    const opts: uPlot.Options = {
      width: Math.max(300, el.clientWidth || 600),
      height: props.height ?? 320,
      legend: { show: n > 0 && n <= 12 },
      cursor: { drag: { x: false, y: false }, points: { size: 7 } },
      scales: {
        x: props.time ? { time: true } : { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
        // Counts start at zero (a bar's height is its value); headroom above the largest.
        y: {
          range: (_u, min, max) => {
            const [lo, hi] = stack ? [stack.min, stack.max] : [Math.min(0, min ?? 0), max ?? 0];
            return [lo < 0 ? lo * 1.1 : 0, hi > 0 ? hi * 1.1 : 1];
          },
        },
      },
      axes: [
        props.time ? {} : {
          values: (_u, splits) => splits.map((v) => (Number.isInteger(v) && props.labels[v] !== undefined ? props.labels[v]! : '')),
          splits: (_u, _i, min, max) => {
            const out: number[] = [];
            const step = Math.max(1, Math.ceil(props.labels.length / 10));
            for (let i = Math.max(0, Math.ceil(min)); i <= Math.floor(max); i += step) out.push(i);
            return out;
          },
        },
        { size: 60 },
      ],
      series: [
        { label: props.time ? 'time' : 'bucket', value: (_u, v) => (v == null ? '' : props.time ? new Date(v * 1000).toLocaleTimeString() : props.labels[v] ?? '') },
        ...props.series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          fill: bars ? `${PALETTE[i % PALETTE.length]}cc` : undefined,
          paths: stack ? stackedBars(stack.y0[i]!, stack.y1[i]!) : bars ? groupedBars(i, n) : undefined,
          points: { show: !bars && xs.length <= 60 },
        })),
      ],
    };
    const chart = new uPlot(opts, [xs, ...props.series.map((s) => s.data)] as uPlot.AlignedData, el);
    el.dataset.points = String(chart.data[0].length);
    el.dataset.series = String(chart.data.length - 1);
    el.dataset.rendered = 'true';

    const onClick = () => {
      const idx = chart.cursor.idx;
      if (idx == null || !click.current) return;
      const top = chart.cursor.top ?? 0;
      let best = 0;
      let bestDistance = Infinity;
      for (let s = 1; s < chart.data.length; s++) {
        const v = chart.data[s]![idx];
        if (v == null) continue;
        if (stack) {
          const [a, b] = [chart.valToPos(stack.y0[s - 1]![idx]!, 'y'), chart.valToPos(stack.y1[s - 1]![idx]!, 'y')];
          if (top >= Math.min(a, b) && top <= Math.max(a, b)) {
            best = s - 1;
            break;
          }
          continue;
        }
        const d = Math.abs(chart.valToPos(v, 'y') - top);
        if (d < bestDistance) {
          bestDistance = d;
          best = s - 1;
        }
      }
      click.current(best, idx);
    };
    chart.over.addEventListener('click', onClick);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(300, el.clientWidth), height: props.height ?? 320 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
      el.dataset.rendered = 'false';
    };
  }, [props.labels, props.series, props.display, props.x]);

  return <div class="chart" ref={host} data-testid={props.testId ?? 'chart'} />;
}
