/**
 * A time-series chart drawn by uPlot (canvas): lines, or bars grouped per bucket. The x axis is the bucket index,
 * labelled with the answer's own labels (already in the project's time zone), or a time in seconds (the health
 * page). A click picks the nearest bucket and the series nearest the pointer.
 *
 * Reading it: the legend names each series and shows its value at the hovered bucket (the latest bucket while the
 * pointer is elsewhere), with the bucket's label first. Axis labels thin out with the width: the x axis keeps every
 * n-th bucket label so that the widest label plus a gap fits between two of them (measured with the axis font),
 * a time axis asks uPlot for ticks at least one clock label apart, and compact charts (dashboard tiles) leave
 * wider gaps.
 *
 * For readers and tests the wrapper carries `data-points` and `data-series` (the chart's own data once drawn) and,
 * after each draw, `data-x-ticks`/`data-y-ticks`: the tick labels uPlot kept, each with the span it covers in CSS
 * pixels from the chart's left (x) or top (y) edge, and `data-width`. uPlot draws axes on a canvas, so this is how a
 * test checks that no two labels overlap and none leaves the chart.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { bucketTickStep, bucketTicks } from '../lib/axis-ticks';
import { clockTime, numberText, shortNumber } from '../lib/format';
import { stackOf } from '../lib/stack';

const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
/** Time axis steps in whole seconds: labels are clock times to the second, so finer ticks would repeat them. */
const CLOCK_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
/** Whole tick steps for counts: 1, 2, 5, 10, 20, 50, … */
const WHOLE_STEPS = Array.from({ length: 13 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();
/** Half the height a 12 px axis label takes, for the spans of y labels. */
const LABEL_HALF_HEIGHT = 7;

let measurer: CanvasRenderingContext2D | null = null;
/** The width in CSS pixels of a label drawn in the axis font. */
function textWidth(text: string): number {
  measurer ??= document.createElement('canvas').getContext('2d')!;
  measurer.font = AXIS_FONT;
  return measurer.measureText(text).width;
}

/** The tick labels an axis kept in its last draw (uPlot's own `_splits`/`_values`) and where each is drawn. */
function tickSpans(u: uPlot, axis: 0 | 1): { text: string; from: number; to: number }[] {
  const a = u.axes[axis] as uPlot.Axis & { _splits?: number[]; _values?: (string | number | null)[] };
  const splits = a._splits ?? [];
  const values = a._values ?? [];
  const scale = axis === 0 ? 'x' : 'y';
  const offset = (axis === 0 ? u.bbox.left : u.bbox.top) / uPlot.pxRatio;
  return splits.flatMap((v, i) => {
    const text = values[i] == null ? '' : String(values[i]);
    if (text === '') return [];
    const at = offset + u.valToPos(v, scale);
    const half = axis === 0 ? textWidth(text) / 2 : LABEL_HALF_HEIGHT;
    return [{ text, from: Math.round((at - half) * 10) / 10, to: Math.round((at + half) * 10) / 10 }];
  });
}

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
  /** A dashboard tile: fewer ticks, a smaller legend. */
  compact?: boolean;
  /** A value in the legend, e.g. with its unit (default: the number, thousands grouped). */
  valueText?: (v: number) => string;
  /** A y axis label (default: `1.2k`), e.g. with its unit. */
  axisText?: (v: number) => string;
  /** The legend's name for the x value (default: Date, or Time on a time axis). */
  xLabel?: string;
  /** Annotations: a dashed line at bucket `at` with its text (shown on hover), e.g. from `/annotations/`. */
  markers?: { at: number; text: string }[];
}) {
  const host = useRef<HTMLDivElement>(null);
  const click = useRef(props.onPointClick);
  click.current = props.onPointClick;
  const markersKey = JSON.stringify(props.markers ?? []);

  useEffect(() => {
    const el = host.current!;
    const n = props.series.length;
    const xs = props.x ?? props.labels.map((_, i) => i);
    const stack = props.display === 'stacked' ? stackOf(props.series) : null;
    const bars = props.display !== 'line';
    const valueText = props.valueText ?? numberText;
    const axisText = props.axisText ?? shortNumber;
    const gap = props.compact ? 28 : 14;
    const widest = props.time ? textWidth(clockTime(0)) : Math.max(0, ...props.labels.map(textWidth));
    const last = xs.length - 1;
    // Counts (every value whole) get whole ticks: no `0.5` persons.
    const whole = props.series.every((ser) => ser.data.every((v) => v == null || Number.isInteger(v)));
    // The latest bucket's values while the pointer is not over the chart.
    const showLatest = (u: uPlot) => {
      if (u.cursor.idx == null && last >= 0) u.setLegend({ idx: last });
    };
    const markers = JSON.parse(markersKey) as { at: number; text: string }[];
    // Annotations as dashed lines over the plot; their positions exposed for tests as `data-markers`.
    const drawMarkers = (u: uPlot) => {
      if (markers.length === 0) return;
      const ctx = u.ctx;
      const drawn: { text: string; x: number }[] = [];
      ctx.save();
      ctx.strokeStyle = '#8e44ad';
      ctx.setLineDash([4, 4]);
      ctx.lineWidth = uPlot.pxRatio;
      for (const m of markers) {
        const x = Math.round(u.valToPos(m.at, 'x', true));
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        drawn.push({ text: m.text, x: x / uPlot.pxRatio });
      }
      ctx.restore();
      el.dataset.markers = JSON.stringify(drawn);
      el.title = markers.map((m) => `${props.labels[m.at] ?? ''}: ${m.text}`).join('\n');
    };
    const expose = (u: uPlot) => {
      el.dataset.xTicks = JSON.stringify(tickSpans(u, 0));
      el.dataset.yTicks = JSON.stringify(tickSpans(u, 1));
      el.dataset.width = String(u.width);
    };
    const opts: uPlot.Options = {
      width: Math.max(300, el.clientWidth || 600),
      height: props.height ?? 320,
      // Room right of the plot for half of the last x label, which is centred on its bucket or tick.
      padding: [12, Math.min(80, Math.ceil(widest / 2) + 4), 0, 0],
      legend: { show: n > 0 && n <= 12, live: true },
      cursor: { drag: { x: false, y: false }, points: { size: 7 } },
      hooks: { ready: [showLatest], setCursor: [showLatest], draw: [drawMarkers, expose] },
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
        props.time
          ? { font: AXIS_FONT, space: widest + gap, incrs: CLOCK_STEPS, values: (_u, splits) => splits.map(clockTime) }
          : {
            font: AXIS_FONT,
            values: (_u, splits) => splits.map((v) => (Number.isInteger(v) && props.labels[v] !== undefined ? props.labels[v]! : '')),
            splits: (u, _i, min, max) => bucketTicks(props.labels.length, bucketTickStep(props.labels.length, widest, u.bbox.width / uPlot.pxRatio, gap), min, max),
          },
        {
          font: AXIS_FONT, space: props.compact ? 36 : 28, values: (_u, splits) => splits.map(axisText), ...(whole ? { incrs: WHOLE_STEPS } : {}),
          size: (_u, values) => Math.ceil(Math.max(24, ...(values ?? []).map((v) => textWidth(String(v))))) + 14,
        },
      ],
      series: [
        {
          label: props.xLabel ?? (props.time ? 'Time' : 'Date'),
          value: (_u, v) => (v == null ? '' : props.time ? clockTime(v) : props.labels[v] ?? ''),
        },
        ...props.series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          fill: bars ? `${PALETTE[i % PALETTE.length]}cc` : undefined,
          paths: stack ? stackedBars(stack.y0[i]!, stack.y1[i]!) : bars ? groupedBars(i, n) : undefined,
          points: { show: !bars && xs.length <= 60 },
          value: (_u: uPlot, v: number | null) => (v == null ? 'no value' : valueText(v)),
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
  }, [props.labels, props.series, props.display, props.x, props.compact, markersKey]);

  return <div class={props.compact ? 'chart compact' : 'chart'} ref={host} data-testid={props.testId ?? 'chart'} />;
}
