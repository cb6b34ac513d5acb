/**
 * Reason codes, their descriptions (exact texts PostHog sends) and the Rust scoring order used to pick the
 * reported reason when no condition matched (flags.md §7.1).
 */
import type { FlagReason, ReasonCode } from './types.js';

/** Higher wins; on a tie the later condition wins (Rust compares with `<=`). */
export const REASON_SCORE: Readonly<Record<ReasonCode, number>> = {
  super_condition_value: 6,
  holdout_condition_value: 5,
  condition_match: 4,
  out_of_rollout_bound: 3,
  no_condition_match: 2,
  no_group_type: 1,
  flag_disabled: 0,
  missing_dependency: -1,
};

export function reasonDescription(code: ReasonCode, conditionIndex: number | null): string {
  switch (code) {
    case 'condition_match':
      return `Matched condition set ${(conditionIndex ?? 0) + 1}`;
    case 'no_condition_match':
      return 'No matching condition set';
    case 'out_of_rollout_bound':
      return 'Out of rollout bound';
    case 'no_group_type':
      return 'No group type';
    case 'super_condition_value':
      return 'Super condition value';
    case 'holdout_condition_value':
      return 'Holdout condition value';
    case 'flag_disabled':
      return 'Feature flag is disabled';
    case 'missing_dependency':
      return 'Flag cannot be evaluated due to missing dependency';
  }
}

export function makeReason(code: ReasonCode, conditionIndex: number | null): FlagReason {
  return Object.freeze({ code, condition_index: conditionIndex, description: reasonDescription(code, conditionIndex) });
}

export const REASON_FLAG_DISABLED = makeReason('flag_disabled', null);
export const REASON_MISSING_DEPENDENCY = makeReason('missing_dependency', null);
export const REASON_HOLDOUT = makeReason('holdout_condition_value', null);
export const REASON_SUPER_CONDITION = makeReason('super_condition_value', 0);
export const REASON_NO_GROUP_TYPE = makeReason('no_group_type', null);
export const REASON_NO_CONDITION_MATCH = makeReason('no_condition_match', null);
