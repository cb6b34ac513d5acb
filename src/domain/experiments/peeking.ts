/**
 * Peeking: a fixed-horizon p-value or confidence interval keeps its error rate only when it is read once, at the
 * planned sample size. Read earlier, and acted on if it looks significant, it gives false positives more often than
 * its nominal level (the more looks, the more often). This note says whether the current look is such an early one.
 */
import { ExperimentInputError } from './types.js';
import { requireCount } from './validate.js';

export interface PeekingNote {
  planned_sample_size: number;
  current_sample_size: number;
  /** current / planned. */
  fraction_of_plan: number;
  /** The result is being looked at before its planned sample size. */
  before_plan: boolean;
  note: string;
}

export function peekingNote(currentSampleSize: number, plannedSampleSize: number): PeekingNote {
  requireCount(currentSampleSize, 'current sample size');
  requireCount(plannedSampleSize, 'planned sample size');
  if (plannedSampleSize === 0) throw new ExperimentInputError('planned sample size must be positive');
  const fraction = currentSampleSize / plannedSampleSize;
  const before = currentSampleSize < plannedSampleSize;
  const percent = `${(100 * fraction).toFixed(1)} %`;
  const note = before
    ? `Looked at before the planned sample size: ${currentSampleSize} of ${plannedSampleSize} (${percent}). A fixed-horizon p-value or interval read now and acted on has a higher false-positive rate than its nominal level; decide early only on the sequential interval.`
    : `At or past the planned sample size: ${currentSampleSize} of ${plannedSampleSize} (${percent}). The fixed-horizon results hold their nominal error rate if this is the look the decision is made on.`;
  return { planned_sample_size: plannedSampleSize, current_sample_size: currentSampleSize, fraction_of_plan: fraction, before_plan: before, note };
}
