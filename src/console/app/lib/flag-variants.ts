/**
 * A multivariate flag's variants as the flag form edits them. PostHog's form starts a multivariate flag as `control`
 * and `test` at 50 % each (experiments need a `control`), and splits the rollout evenly again whenever a variant is
 * added or removed, so the form never offers a split that cannot be saved (the API requires a sum of 100).
 */
export interface FlagVariant {
  key: string;
  name?: string;
  rollout_percentage: number;
}

/** 100 % over `n` variants in whole percents: the remainder of the division goes one each to the first ones. */
export function evenSplit(n: number): number[] {
  if (n <= 0) return [];
  const base = Math.floor(100 / n);
  const remainder = 100 - base * n;
  return Array.from({ length: n }, (_, i) => base + (i < remainder ? 1 : 0));
}

function resplit(variants: FlagVariant[]): FlagVariant[] {
  const shares = evenSplit(variants.length);
  return variants.map((v, i) => ({ ...v, rollout_percentage: shares[i]! }));
}

/** A key not yet taken: `test`, then `test-2`, `test-3`, … */
function freeKey(variants: readonly FlagVariant[]): string {
  const taken = new Set(variants.map((v) => v.key));
  if (!taken.has('test')) return 'test';
  for (let i = 2; ; i++) if (!taken.has(`test-${i}`)) return `test-${i}`;
}

/** "Add variant": a boolean flag becomes control/test at 50/50; otherwise one more variant, all split evenly. */
export function addVariant(variants: readonly FlagVariant[]): FlagVariant[] {
  if (variants.length === 0) return resplit([{ key: 'control', rollout_percentage: 0 }, { key: 'test', rollout_percentage: 0 }]);
  return resplit([...variants, { key: freeKey(variants), rollout_percentage: 0 }]);
}

/** Removes variant `index`; the others are split evenly again (none left: a boolean flag). */
export function removeVariant(variants: readonly FlagVariant[], index: number): FlagVariant[] {
  return resplit(variants.filter((_, i) => i !== index));
}

/** The sum of the rollouts, and whether it is the 100 the API requires. */
export function variantTotal(variants: readonly FlagVariant[]): { total: number; valid: boolean } {
  const total = variants.reduce((sum, v) => sum + (Number.isFinite(v.rollout_percentage) ? v.rollout_percentage : 0), 0);
  return { total, valid: variants.length === 0 || total === 100 };
}
