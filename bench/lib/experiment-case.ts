/**
 * An experiment over the analytics dataset, beside the same metric as a plain trend. Every person's first device
 * (`anon-<p>-0`, merged into `user-<p>` once that person signed up) is exposed on the dataset's first day, half
 * to control and half to test (`$feature_flag_called`, as posthog-js sends it); the experiment runs over the whole
 * dataset with one metric: conversion to `purchase` (a one-step funnel). Its results (refresh=true, so every
 * round scans) are timed against a trend of the same event over the same range (weekly active purchasers,
 * refresh=true): the experiment reads the exposures and the metric's events per person, the trend only the
 * metric's events.
 */
import type { DatasetOptions } from './analytics-dataset.js';
import { PERSONAL_KEY, PROJECT_KEY } from './paths.js';
import { round1, round2 } from './proc-stats.js';

const FLAG = 'bench-experiment';
const AUTH = { authorization: `Bearer ${PERSONAL_KEY}` };

async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { ...AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer).slice(0, 300)}`);
  return answer;
}

export async function experimentBesideTrend(base: string, opts: DatasetOptions, repeats: number, log: (msg: string) => void) {
  const start = opts.end - opts.days * 86_400_000;
  log(`experiment: exposing ${opts.persons} persons on the first day`);
  for (let p = 0; p < opts.persons; p += 1000) {
    const batch = [];
    for (let q = p; q < Math.min(opts.persons, p + 1000); q++) {
      batch.push({
        event: '$feature_flag_called', distinct_id: `anon-${q}-0`, timestamp: new Date(start + 60_000 + q).toISOString(),
        properties: { $feature_flag: FLAG, $feature_flag_response: q % 2 === 0 ? 'control' : 'test' },
      });
    }
    const res = await fetch(`${base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch }) });
    if (res.status !== 200) throw new Error(`exposures: /batch/ answered ${res.status}`);
  }
  const metric = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'purchase' }] };
  const experiment = await call(base, 'POST', '/api/projects/@current/experiments/', {
    name: 'Bench experiment', feature_flag_key: FLAG, metrics: [metric],
    start_date: new Date(start).toISOString(), end_date: new Date(opts.end - 1).toISOString(),
  });
  const trendPath = `/api/projects/@current/insights/trend/?events=${encodeURIComponent(JSON.stringify([{ id: 'purchase', math: 'weekly_active' }]))}`
    + `&date_from=${new Date(start).toISOString()}&date_to=${new Date(opts.end - 1).toISOString()}&refresh=true`;
  const resultsPath = `/api/projects/@current/experiments/${experiment.id}/results/?refresh=true`;
  const times = { experiment: [] as number[], trend: [] as number[] };
  let results: any = null;
  // Alternating, after one warm-up round of each; the first round also waits for the exposures to be applied.
  for (let i = 0; i <= repeats; i++) {
    let t0 = performance.now();
    results = await call(base, 'GET', resultsPath);
    if (i > 0) times.experiment.push(performance.now() - t0);
    t0 = performance.now();
    await call(base, 'GET', trendPath);
    if (i > 0) times.trend.push(performance.now() - t0);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const entry = {
    case: 'experiment results (conversion to purchase over 30 days) beside a trend of weekly active purchasers',
    experiment_ms: round1(median(times.experiment)),
    trend_ms: round1(median(times.trend)),
    experiment_to_trend: round2(median(times.experiment) / median(times.trend)),
    exposures: results.exposures,
    srm_flagged: results.srm?.flagged ?? null,
    conversion: [results.metrics[0].baseline, ...results.metrics[0].variant_results].map((v: any) => ({ key: v.key, exposures: v.exposures, converted: v.success_count })),
    rounds: times,
  };
  log(JSON.stringify({ ...entry, rounds: undefined }));
  return entry;
}
