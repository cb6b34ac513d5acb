/** A query's `timings` (PostHog's `[{k, t}]`, seconds per step): `lap(k)` closes the step that began at the last lap. */
export function stepTimer(): { timings: { k: string; t: number }[]; lap(k: string): void } {
  const timings: { k: string; t: number }[] = [];
  let mark = performance.now();
  return {
    timings,
    lap(k: string) {
      const now = performance.now();
      timings.push({ k, t: (now - mark) / 1000 });
      mark = now;
    },
  };
}
