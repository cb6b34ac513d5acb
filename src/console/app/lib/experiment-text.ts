/**
 * What the experiment page says about a result that is not significant yet. The API's minimum-sample guard
 * (src/domain/experiments/guard.ts) lists, per variant, what it has and what it needs; saying only "not enough data"
 * left a user with a 98 % chance to win and an interval clear of zero wondering what was missing.
 */
export interface GuardReasonView {
  key: string;
  reason: 'too_few_exposures' | 'too_few_samples' | 'too_few_successes' | 'too_few_failures' | string;
  have: number;
  need: number;
}

const WHAT: Record<string, [string, string]> = {
  too_few_exposures: ['exposure', 'exposures'],
  too_few_samples: ['person with a value', 'persons with a value'],
  too_few_successes: ['conversion', 'conversions'],
  too_few_failures: ['person who did not convert', 'persons who did not convert'],
};

/** One sentence per reason: "control: 40 exposures of the 100 needed per variant." */
export function guardReasonsText(reasons: readonly GuardReasonView[]): string[] {
  return reasons.map((r) => {
    const [one, many] = WHAT[r.reason] ?? [r.reason, r.reason];
    return `${r.key}: ${r.have} ${r.have === 1 ? one : many} of the ${r.need} needed per variant.`;
  });
}

/** The interval column's axis, said in words instead of a bare "(±207 %)". */
export function intervalAxisText(extent: number): string {
  const pct = Math.round(extent * 100);
  return `Each bar is the interval of the lift against control on an axis from −${pct} % to +${pct} %, with zero marked: green when it lies above zero, red below, grey while the result is not significant.`;
}
