/**
 * An editor for PostHog property filters (`[{key, type, operator, value}]`), used by the events and persons lists,
 * flag release conditions, cohorts and insights. The operators are those Quill evaluates. Inside a `PropertyScope`
 * the name and value fields suggest the project's names and seen values (components/property-input.tsx).
 */
import { type PropertyRef } from '../lib/property-definitions';
import { PropertyInput, PropertyValueInput } from './property-input';

export interface PropertyFilter {
  key: string;
  type: string;
  operator?: string;
  value?: unknown;
}

export const OPERATORS: [string, string][] = [
  ['exact', '= equals'], ['is_not', '≠ is not'], ['icontains', 'contains'], ['not_icontains', 'does not contain'],
  ['regex', 'matches regex'], ['not_regex', 'does not match regex'], ['gt', '> greater than'], ['gte', '≥'], ['lt', '< less than'],
  ['lte', '≤'], ['is_set', 'is set'], ['is_not_set', 'is not set'], ['is_date_before', 'date before'], ['is_date_after', 'date after'],
  ['semver_gte', 'semver ≥'], ['semver_lt', 'semver <'],
];
const NO_VALUE = new Set(['is_set', 'is_not_set']);

/** The filter value as typed: numbers for numeric operators, a list for comma-separated `exact`/`is_not`. */
export function parseValue(operator: string, text: string): unknown {
  if (NO_VALUE.has(operator)) return operator;
  if (['gt', 'gte', 'lt', 'lte'].includes(operator) && text.trim() !== '' && !Number.isNaN(Number(text))) return Number(text);
  if ((operator === 'exact' || operator === 'is_not') && text.includes(',')) return text.split(',').map((s) => s.trim()).filter(Boolean);
  return text;
}

export function valueToText(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ');
  return value === undefined || value === null ? '' : String(value);
}

export function PropertyFilters(props: {
  value: PropertyFilter[];
  onChange(filters: PropertyFilter[]): void;
  types?: string[];
  cohorts?: { id: number; name: string }[];
  flags?: { id: number; key: string }[];
  label?: string;
}) {
  const types = props.types ?? ['event', 'person'];
  const set = (i: number, patch: Partial<PropertyFilter>) => props.onChange(props.value.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  return (
    <div class="filters" data-testid="property-filters">
      {props.value.map((f, i) => (
        <div class="filter-row" key={i}>
          {types.length > 1 && (
            <select aria-label="filter type" value={f.type} onChange={(e) => {
              const type = e.currentTarget.value;
              set(i, type === 'cohort' ? { type, key: 'id', operator: 'in', value: props.cohorts?.[0]?.id ?? '' }
                : type === 'flag' ? { type, key: String(props.flags?.[0]?.id ?? ''), operator: 'flag_evaluates_to', value: true }
                  : { type, operator: 'exact' });
            }}>
              {types.map((t) => <option value={t} key={t}>{t}</option>)}
            </select>
          )}
          {f.type === 'cohort' ? (
            <select aria-label="cohort" value={String(f.value)} onChange={(e) => set(i, { value: Number(e.currentTarget.value) })}>
              {(props.cohorts ?? []).map((c) => <option value={c.id} key={c.id}>{c.name || `Cohort ${c.id}`}</option>)}
            </select>
          ) : f.type === 'flag' ? (
            <>
              <select aria-label="flag" value={f.key} onChange={(e) => set(i, { key: e.currentTarget.value })}>
                {(props.flags ?? []).map((fl) => <option value={fl.id} key={fl.id}>{fl.key}</option>)}
              </select>
              <span>evaluates to</span>
              <input aria-label="flag value" value={valueToText(f.value)} onInput={(e) => {
                const t = e.currentTarget.value;
                set(i, { value: t === 'true' ? true : t === 'false' ? false : t });
              }} />
            </>
          ) : (
            <>
              {f.type === 'event' || f.type === 'person'
                ? <PropertyInput kind={f.type} label="property key" live value={f.key} onChange={(key) => set(i, { key })} />
                : <input aria-label="property key" placeholder="property" value={f.key} onInput={(e) => set(i, { key: e.currentTarget.value })} />}
              <select aria-label="operator" value={f.operator ?? 'exact'} onChange={(e) => set(i, { operator: e.currentTarget.value, value: parseValue(e.currentTarget.value, valueToText(f.value)) })}>
                {OPERATORS.map(([op, label]) => <option value={op} key={op}>{label}</option>)}
              </select>
              {!NO_VALUE.has(f.operator ?? 'exact') && (
                f.type === 'event' || f.type === 'person'
                  ? <PropertyValueInput kind={f.type} propertyKey={f.key} label="property value" value={valueToText(f.value)}
                    onInput={(text) => set(i, { value: parseValue(f.operator ?? 'exact', text) })} />
                  : <input aria-label="property value" placeholder="value" value={valueToText(f.value)} onInput={(e) => set(i, { value: parseValue(f.operator ?? 'exact', e.currentTarget.value) })} />
              )}
            </>
          )}
          <button type="button" class="ghost" aria-label="remove filter" onClick={() => props.onChange(props.value.filter((_, j) => j !== i))}>×</button>
        </div>
      ))}
      <button type="button" class="ghost" onClick={() => props.onChange([...props.value, { key: '', type: types[0]!, operator: 'exact', value: '' }])}>
        + {props.label ?? 'property filter'}
      </button>
    </div>
  );
}

/** Filters worth sending: a key (or a cohort) and, where the operator needs one, a value. */
export function completeFilters(filters: PropertyFilter[]): PropertyFilter[] {
  return filters.filter((f) => f.key !== '' && (NO_VALUE.has(f.operator ?? '') || (f.value !== '' && f.value !== undefined)));
}

/** The property names of filters (event and person ones), for a page that checks them before it runs. */
export function filterRefs(filters: PropertyFilter[]): PropertyRef[] {
  return filters.filter((f) => (f.type === 'event' || f.type === 'person') && f.key !== '').map((f) => ({ key: f.key, kind: f.type as 'event' | 'person' }));
}
