/** Input checks shared by the metric modules: each failure is an ExperimentInputError naming the variant and field. */
import { CONTROL_KEY, ExperimentInputError } from './types.js';

export function requireCount(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new ExperimentInputError(`${what} must be a non-negative integer`);
  return value;
}

export function requireFinite(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ExperimentInputError(`${what} must be a finite number`);
  return value;
}

export function requireProbability(value: number, what: string): number {
  if (!(value > 0 && value < 1)) throw new ExperimentInputError(`${what} must lie strictly between 0 and 1`);
  return value;
}

/** Keys are non-empty and distinct, exactly one is `control`, and there is at least one other. */
export function requireVariantKeys(variants: readonly { key: string }[]): void {
  const seen = new Set<string>();
  for (const v of variants) {
    if (typeof v.key !== 'string' || v.key === '') throw new ExperimentInputError('every variant needs a non-empty key');
    if (seen.has(v.key)) throw new ExperimentInputError(`variant "${v.key}" is listed twice`);
    seen.add(v.key);
  }
  if (!seen.has(CONTROL_KEY)) throw new ExperimentInputError(`no variant is named "${CONTROL_KEY}"`);
  if (seen.size < 2) throw new ExperimentInputError('an experiment needs a test variant beside the control');
}

/** The control first, then the test variants in their given order. */
export function controlFirst<T extends { key: string }>(variants: readonly T[]): [T, T[]] {
  const control = variants.find((v) => v.key === CONTROL_KEY);
  if (control === undefined) throw new ExperimentInputError(`no variant is named "${CONTROL_KEY}"`);
  return [control, variants.filter((v) => v !== control)];
}
