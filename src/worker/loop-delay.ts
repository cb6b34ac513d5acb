/**
 * How late this worker thread's event loop runs (perf_hooks' event-loop delay histogram): a request, a flag
 * evaluation or an acknowledgement can wait that long behind whatever the thread is doing. Shown per worker in
 * `/_stats` as the delay since the previous read, so a bench can read it around one case.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface LoopDelay {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

// Sampled every 10 ms from the moment a worker thread loads this module.
const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();

/** The delay since the previous call (or since the thread started), then starts a new window. */
export function loopDelaySinceLastRead(): LoopDelay {
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  const out = { p50_ms: ms(histogram.percentile(50)), p99_ms: ms(histogram.percentile(99)), max_ms: ms(histogram.max) };
  histogram.reset();
  return out;
}
