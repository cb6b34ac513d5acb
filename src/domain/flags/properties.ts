/**
 * Compiling one property filter `{key, value, operator?, type, negation?, group_type_index?}` (flags.md §3.1).
 */
import { compileOperator } from './operators.js';
import { Source, type CompiledProperty, type GroupTypeMapping } from './types.js';
import { intOf, isRecord } from './values.js';

export interface PropertyEnv {
  readonly groupTypes: GroupTypeMapping;
  readonly timeZone: string | null;
  /** Aggregation of the enclosing condition: untyped properties read from it. null = person. */
  readonly aggregation: number | null;
  /** Resolves a flag-dependency reference (flag id string or key) to a flag index, -1 if unknown. */
  readonly resolveFlag: (ref: unknown) => number;
}

/** Keys whose plain lookup would hit Object.prototype (`constructor`, `toString`, `__proto__`...). */
function shadowsPrototype(key: string): boolean {
  return key in Object.prototype;
}

export function groupTypeName(groupTypes: GroupTypeMapping, index: number | null): string | null | undefined {
  if (index === null) return null;
  const name = Object.hasOwn(groupTypes, String(index)) ? groupTypes[String(index)] : undefined;
  return typeof name === 'string' ? name : undefined;
}

export function compileProperty(raw: unknown, env: PropertyEnv): CompiledProperty {
  const p = isRecord(raw) ? raw : {};
  const key = typeof p.key === 'string' ? p.key : p.key === undefined || p.key === null ? '' : String(p.key);
  const type = p.type;
  let source: Source;
  let groupTypeIndex: number | null = null;

  if (type === 'cohort') source = Source.Cohort;
  else if (type === 'flag') source = Source.Flag;
  else if (type === 'person_metadata') source = Source.PersonMetadata;
  else if (type === 'group') {
    source = Source.Group;
    groupTypeIndex = intOf(p.group_type_index) ?? env.aggregation;
  } else if (type === 'person') source = Source.Person;
  else if (type === undefined || type === null) {
    // Untyped filters read from whatever the condition aggregates on.
    source = env.aggregation === null ? Source.Person : Source.Group;
    groupTypeIndex = env.aggregation;
  } else source = Source.Unsupported;

  if (source === Source.Group && groupTypeIndex === null) source = Source.Unsupported;

  const operatorName = p.operator;
  const isCohort = source === Source.Cohort;
  const isFlag = source === Source.Flag;
  const expected = p.value;

  return {
    key,
    source,
    groupTypeIndex,
    groupTypeName: groupTypeName(env.groupTypes, groupTypeIndex),
    negation: p.negation === true,
    protoKey: shadowsPrototype(key),
    operator:
      isCohort || isFlag ? compileOperator('is_set', null, null) : compileOperator(operatorName, p.value, env.timeZone),
    cohortId: isCohort ? (intOf(p.value) ?? NaN) : NaN,
    notIn: isCohort && operatorName === 'not_in',
    dependencyIndex: isFlag ? env.resolveFlag(key) : -1,
    dependencyRef: isFlag ? key : '',
    expected: isFlag && (typeof expected === 'boolean' || typeof expected === 'string') ? expected : null,
  };
}
