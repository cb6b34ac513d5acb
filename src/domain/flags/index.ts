/**
 * Feature-flag evaluation engine: pure, PostHog-compatible (PostHog's semantics as documented in the team's flags fact sheet).
 *
 * Typical use: `compileFlagSet` once per (project, revision), cache it, then `evaluateFlags` per request.
 */
export { compileCondition, compileFlagSet } from './compile.js';
export { compileCohorts } from './cohorts.js';
export { buildLocalEvaluationPayload, type LocalEvaluationFlag, type LocalEvaluationPayload } from './definitions.js';
export { evaluateFlag, evaluateFlags, matchesCohort, matchesConditionProperties } from './evaluate.js';
export { effectiveFilters, isSimpleFlag, simpleRolloutPercentage } from './filters.js';
export { bucketHash, HOLDOUT_PREFIX, LONG_SCALE, VARIANT_SALT } from './hash.js';
export { PROPERTY_OPERATORS } from './operators.js';
export { ofrepEvaluationOf, ofrepReasonOf, ofrepRequestOf, type OfrepErrorCode, type OfrepEvaluation, type OfrepReason, type OfrepRequest } from './ofrep.js';
export { REASON_SCORE, reasonDescription } from './reasons.js';
export { flagStatus, fullyRolledOutValue, STALE_AFTER_MS, type FlagStatus } from './status.js';
export { sha1Hex } from '../sha1.js';
export type {
  CohortRecord,
  CompileOptions,
  CompiledCohorts,
  CompiledCondition,
  CompiledFlag,
  CompiledFlagSet,
  EvaluateOptions,
  EvaluationContext,
  FlagReason,
  FlagRecord,
  FlagResult,
  GroupTypeMapping,
  ReasonCode,
} from './types.js';
export { MAX_PROPERTY_VALUES, validateFlagFilters, type FieldError, type ValidateFiltersContext } from './validate.js';
