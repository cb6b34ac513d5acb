/**
 * Create or edit a flag: key, name, release conditions (property, cohort and flag-dependency filters with a
 * rollout percentage and an optional variant override, each with its blast radius), multivariate variants,
 * payloads, group aggregation, a holdout, experience continuity; its usage, scheduled changes and history with
 * revert (./flag-lifecycle.tsx); soft delete. The filters
 * are checked in the page by the very validator the API runs (src/domain/flags/validate.ts), then by the API.
 */
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { validateFlagFilters } from '../../../domain/flags/validate';
import { api, ApiError, type Paginated } from '../api';
import { completeFilters, PropertyFilters, type PropertyFilter } from '../components/property-filters';
import { PropertyScope } from '../components/property-input';
import { ErrorNote, Field, Loading, Page, Tabs } from '../components/ui';
import { addVariant, removeVariant, variantTotal, type FlagVariant } from '../lib/flag-variants';
import { when } from '../lib/format';
import { useGet } from '../lib/hooks';
import type { Flag } from './flags';
import { FlagHistory, FlagScheduleTab, FlagUsageTab } from './flag-lifecycle';

interface Condition {
  properties: PropertyFilter[];
  rollout_percentage: number | null;
  variant?: string | null;
}
type Variant = FlagVariant;
interface Draft {
  key: string;
  name: string;
  active: boolean;
  ensure_experience_continuity: boolean;
  aggregation: string;
  groups: Condition[];
  variants: Variant[];
  payloads: Record<string, string>;
  holdout: { id: string; exclusion_percentage: number } | null;
}

const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/;
const EMPTY: Draft = {
  key: '', name: '', active: true, ensure_experience_continuity: false, aggregation: '',
  groups: [{ properties: [], rollout_percentage: 100 }], variants: [], payloads: {}, holdout: null,
};

function draftOf(f: Flag): Draft {
  const filters = f.filters ?? {};
  const payloads: Record<string, string> = {};
  for (const [k, v] of Object.entries((filters.payloads ?? {}) as Record<string, unknown>)) payloads[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return {
    key: f.key, name: f.name ?? '', active: f.active, ensure_experience_continuity: f.ensure_experience_continuity ?? false,
    aggregation: filters.aggregation_group_type_index == null ? '' : String(filters.aggregation_group_type_index),
    groups: (filters.groups ?? []).map((g: any) => ({ properties: g.properties ?? [], rollout_percentage: g.rollout_percentage ?? null, variant: g.variant ?? null })),
    variants: filters.multivariate?.variants ?? [],
    payloads,
    holdout: filters.holdout ? { id: String(filters.holdout.id), exclusion_percentage: filters.holdout.exclusion_percentage } : null,
  };
}

/** The API body of a draft. */
export function flagBody(d: Draft): Record<string, unknown> {
  const payloadKeys = d.variants.length ? new Set(d.variants.map((v) => v.key)) : new Set(['true']);
  const payloads: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.payloads)) if (v.trim() !== '' && payloadKeys.has(k)) payloads[k] = v;
  const filters: Record<string, unknown> = {
    groups: d.groups.map((g) => ({ properties: completeFilters(g.properties), rollout_percentage: g.rollout_percentage, ...(g.variant ? { variant: g.variant } : {}) })),
    payloads,
    multivariate: d.variants.length ? { variants: d.variants } : null,
    aggregation_group_type_index: d.aggregation === '' ? null : Number(d.aggregation),
  };
  if (d.holdout && d.holdout.id !== '') filters.holdout = { id: Number(d.holdout.id), exclusion_percentage: d.holdout.exclusion_percentage };
  return { key: d.key, name: d.name, active: d.active, ensure_experience_continuity: d.ensure_experience_continuity, filters };
}

const TABS = ['Overview', 'Usage', 'Schedule', 'Activity'] as const;

export function FlagPage({ projectId, flagId }: { projectId: number; flagId: string }) {
  const isNew = flagId === 'new';
  const base = `/api/projects/${projectId}/feature_flags`;
  const loaded = useGet<Flag>(isNew ? null : `${base}/${flagId}/`);
  const cohorts = useGet<Paginated<{ id: number; name: string }>>(`/api/projects/${projectId}/cohorts/?limit=500`);
  const flags = useGet<Paginated<Flag>>(`${base}/?limit=500`);
  // The project's group types (index → name) are in its local-evaluation definitions: "Match by" offers only those.
  const definitions = useGet<{ group_type_mapping: Record<string, string> }>(`${base}/local_evaluation/`);
  const groupTypes = Object.entries(definitions.data?.group_type_mapping ?? {}).sort(([a], [b]) => Number(a) - Number(b));
  const [tab, setTab] = useState<(typeof TABS)[number]>('Overview');
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [, navigate] = useLocation();
  useEffect(() => {
    if (loaded.data) setDraft(draftOf(loaded.data));
  }, [loaded.data]);
  if (!isNew && loaded.error) return <Page title="Feature flag"><ErrorNote error={loaded.error} /></Page>;
  if (!isNew && !loaded.data) return <Loading when />;

  const variantSum = variantTotal(draft.variants);
  const set = (patch: Partial<Draft>) => {
    setSaved(false);
    setDraft({ ...draft, ...patch });
  };
  const setGroup = (i: number, patch: Partial<Condition>) => set({ groups: draft.groups.map((g, j) => (j === i ? { ...g, ...patch } : g)) });
  const cohortList = cohorts.data?.results ?? [];
  const otherFlags = (flags.data?.results ?? []).filter((f) => String(f.id) !== flagId);

  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const body = flagBody(draft);
    if (!KEY_PATTERN.test(draft.key)) return setError('Key: only letters, numbers, hyphens (-) & underscores (_) are allowed.');
    const problem = validateFlagFilters(body.filters, {
      existingCohortIds: new Set(cohortList.map((c) => c.id)),
      groupTypes: {},
      flagExists: (ref) => otherFlags.some((f) => String(f.id) === ref || f.key === ref),
    });
    if (problem) return setError(problem.detail);
    try {
      const answer = isNew ? await api.post<Flag>(`${base}/`, body) : await api.patch<Flag>(`${base}/${flagId}/`, body);
      setSaved(true);
      if (isNew) navigate(`/project/${projectId}/flags/${answer.id}`);
      else loaded.reload();
    } catch (err) {
      setError(err instanceof ApiError && err.body?.attr ? `${err.body.attr}: ${err.message}` : (err as Error).message);
    }
  };

  return (
    <Page title={isNew ? 'New feature flag' : `Flag ${draft.key}`} testId="flag-page" actions={!isNew && (
      <button class="danger" onClick={async () => {
        if (!confirm(`Delete flag ${draft.key}?`)) return;
        try {
          await api.patch(`${base}/${flagId}/`, { deleted: true });
          navigate(`/project/${projectId}/flags`);
        } catch (err) {
          setError((err as Error).message);
        }
      }}>Delete</button>
    )}>
      {!isNew && <Tabs tabs={TABS} value={tab} onChange={(t) => setTab(t as typeof tab)} />}
      {tab === 'Activity' ? <FlagHistory base={base} flagId={flagId} currentVersion={loaded.data?.version ?? 0} onReverted={() => loaded.reload()} />
        : tab === 'Usage' ? <FlagUsageTab base={base} flagId={flagId} />
        : tab === 'Schedule' ? <FlagScheduleTab projectId={projectId} flagId={flagId} /> : (
        <form class="flag-form" data-testid="flag-form" onSubmit={save}>
          <div class="grid2">
            <Field label="Key"><input name="key" required value={draft.key} onInput={(e) => set({ key: e.currentTarget.value })} /></Field>
            <Field label="Name" hint="What the flag is for (PostHog's UI calls it the description)."><input name="name" value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} /></Field>
          </div>
          <div class="checks">
            <label><input type="checkbox" name="active" checked={draft.active} onChange={(e) => set({ active: e.currentTarget.checked })} /> Enabled</label>
            <label><input type="checkbox" checked={draft.ensure_experience_continuity} onChange={(e) => set({ ensure_experience_continuity: e.currentTarget.checked })} /> Persist across authentication steps</label>
          </div>
          {(groupTypes.length > 0 || draft.aggregation !== '') && (
            <Field label="Match by" hint="Group flags roll out by group (e.g. company) instead of by person.">
              <select aria-label="aggregation" value={draft.aggregation} onChange={(e) => set({ aggregation: e.currentTarget.value })}>
                <option value="">Users</option>
                {groupTypes.map(([index, name]) => <option key={index} value={index}>{name}</option>)}
                {draft.aggregation !== '' && !groupTypes.some(([index]) => index === draft.aggregation) && (
                  <option value={draft.aggregation}>Group type {draft.aggregation}</option>
                )}
              </select>
            </Field>
          )}

          <h2>Release conditions</h2>
          {draft.groups.map((g, i) => (
            <fieldset class="condition" key={i} data-testid="condition">
              <legend>Condition set {i + 1}</legend>
              <PropertyScope projectId={projectId}><PropertyFilters value={g.properties} onChange={(properties) => setGroup(i, { properties })}
                types={draft.aggregation === '' ? ['person', 'cohort', 'flag'] : ['group', 'flag']} cohorts={cohortList} flags={otherFlags} label="condition" /></PropertyScope>
              <div class="row">
                <Field label="Roll out to (%)">
                  <input type="number" min={0} max={100} step="any" aria-label={`rollout ${i + 1}`} value={g.rollout_percentage ?? ''}
                    onInput={(e) => setGroup(i, { rollout_percentage: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })} />
                </Field>
                {draft.variants.length > 0 && (
                  <Field label="Variant override">
                    <select value={g.variant ?? ''} onChange={(e) => setGroup(i, { variant: e.currentTarget.value || null })}>
                      <option value="">None</option>
                      {draft.variants.map((v) => <option key={v.key} value={v.key}>{v.key}</option>)}
                    </select>
                  </Field>
                )}
                <BlastRadius projectId={projectId} condition={g} aggregation={draft.aggregation} />
                <button type="button" class="ghost danger" onClick={() => set({ groups: draft.groups.filter((_, j) => j !== i) })}>Remove condition set</button>
              </div>
            </fieldset>
          ))}
          <button type="button" onClick={() => set({ groups: [...draft.groups, { properties: [], rollout_percentage: 100 }] })}>Add condition set</button>

          <h2>Variants</h2>
          {draft.variants.length === 0 && <p class="muted">A boolean flag. Add a variant to make it multivariate: it starts as control and test, split evenly.</p>}
          {draft.variants.map((v, i) => (
            <div class="row" key={i} data-testid="variant">
              <input aria-label={`variant key ${i + 1}`} placeholder="key" value={v.key} onInput={(e) => set({ variants: draft.variants.map((x, j) => (j === i ? { ...x, key: e.currentTarget.value } : x)) })} />
              <input aria-label={`variant rollout ${i + 1}`} type="number" min={0} max={100} value={v.rollout_percentage}
                onInput={(e) => set({ variants: draft.variants.map((x, j) => (j === i ? { ...x, rollout_percentage: Number(e.currentTarget.value) } : x)) })} />
              <span>%</span>
              <button type="button" class="ghost danger" aria-label={`remove variant ${i + 1}`} onClick={() => set({ variants: removeVariant(draft.variants, i) })}>×</button>
            </div>
          ))}
          {draft.variants.length > 0 && (
            <p class={variantSum.valid ? 'muted' : 'error'} data-testid="variant-total">
              {variantSum.valid ? `Rollouts sum to 100%.` : `Rollouts sum to ${variantSum.total}%: they must sum to 100%.`}
            </p>
          )}
          <button type="button" onClick={() => set({ variants: addVariant(draft.variants) })}>Add variant</button>

          <h2>Payloads</h2>
          {(draft.variants.length ? draft.variants.map((v) => v.key) : ['true']).map((k) => (
            <Field key={k} label={`Payload when ${k === 'true' ? 'enabled' : k}`} hint="JSON">
              <textarea aria-label={`payload ${k}`} rows={2} value={draft.payloads[k] ?? ''} onInput={(e) => set({ payloads: { ...draft.payloads, [k]: e.currentTarget.value } })} />
            </Field>
          ))}

          <h2>Holdout</h2>
          <div class="row">
            <label><input type="checkbox" checked={draft.holdout !== null} onChange={(e) => set({ holdout: e.currentTarget.checked ? { id: '1', exclusion_percentage: 10 } : null })} /> Exclude a holdout group</label>
            {draft.holdout && (
              <>
                <Field label="Holdout id"><input type="number" value={draft.holdout.id} onInput={(e) => set({ holdout: { ...draft.holdout!, id: e.currentTarget.value } })} /></Field>
                <Field label="Excluded (%)"><input type="number" min={0} max={100} value={draft.holdout.exclusion_percentage} onInput={(e) => set({ holdout: { ...draft.holdout!, exclusion_percentage: Number(e.currentTarget.value) } })} /></Field>
              </>
            )}
          </div>

          {error && <p class="error" role="alert" data-testid="flag-error">{error}</p>}
          {saved && <p class="ok" role="status">Saved.</p>}
          <div class="form-actions"><button type="submit" class="primary">{isNew ? 'Create flag' : 'Save'}</button></div>
        </form>
      )}
    </Page>
  );
}

function BlastRadius(props: { projectId: number; condition: Condition; aggregation: string }) {
  const [answer, setAnswer] = useState<string | null>(null);
  return (
    <span class="blast">
      <button type="button" onClick={async () => {
        try {
          const r = await api.post<{ users_affected: number; total_users: number }>(`/api/projects/${props.projectId}/feature_flags/user_blast_radius/`, {
            condition: { properties: completeFilters(props.condition.properties), rollout_percentage: props.condition.rollout_percentage },
            ...(props.aggregation === '' ? {} : { group_type_index: Number(props.aggregation) }),
          });
          setAnswer(`${r.users_affected} of ${r.total_users} match`);
        } catch (err) {
          setAnswer((err as Error).message);
        }
      }}>Estimate blast radius</button>
      {answer && <span class="muted" data-testid="blast-radius"> {answer}</span>}
    </span>
  );
}
