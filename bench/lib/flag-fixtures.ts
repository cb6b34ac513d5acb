/**
 * The flag-evaluation fixture: one stored person with 20 properties and a mixed set of flags — plain rollouts,
 * conditions on the person's properties (several operators), and multivariate flags — created through the
 * private API like a user would.
 */
import { PROJECT_KEY } from './paths.js';
import type { QuillApi } from './quill-api.js';

export const PERSON_DISTINCT_ID = 'bench-person-1';

export const PERSON_PROPERTIES: Record<string, unknown> = {
  email: 'ada@example.com',
  name: 'Ada Example',
  plan: 'enterprise',
  company: 'Example Corp',
  country: 'DE',
  city: 'Berlin',
  age: 36,
  signup_date: '2024-03-14T09:00:00Z',
  role: 'admin',
  team_size: 42,
  is_paying: true,
  mrr: 1250.5,
  app_version: '3.12.1',
  locale: 'de-DE',
  timezone: 'Europe/Berlin',
  referrer: 'https://www.google.com/',
  utm_source: 'newsletter',
  beta_opt_in: true,
  account_id: 'acct_8f3a2c',
  last_login: '2026-01-05T18:30:00Z',
};

/** The flag whose condition only holds once the person above is stored: evaluates to true when applied. */
export const READY_FLAG = 'bench-ready';

type Condition = { key: string; value?: unknown; operator: string; type: 'person' };
const person = (key: string, operator: string, value?: unknown): Condition =>
  (value === undefined ? { key, operator, type: 'person' } : { key, operator, value, type: 'person' });

/** Conditions on the person (most match, some do not: both outcomes are evaluated). */
const CONDITIONS: Condition[][] = [
  [person('plan', 'exact', ['pro', 'enterprise'])],
  [person('email', 'icontains', '@example.com')],
  [person('age', 'gt', 30), person('country', 'exact', ['DE', 'AT', 'CH'])],
  [person('signup_date', 'is_date_after', '2023-01-01')],
  [person('app_version', 'semver_gte', '3.0.0')],
  [person('role', 'is_not', 'viewer')],
  [person('account_id', 'regex', '^acct_[0-9a-f]+$')],
  [person('beta_opt_in', 'exact', ['true'])],
  [person('mrr', 'lt', 1000)],
  [person('team_size', 'gte', 10), person('locale', 'icontains', 'de')],
  [person('utm_source', 'is_set')],
  [person('city', 'not_icontains', 'paris')],
];

export interface FlagDefinition {
  key: string;
  name: string;
  filters: Record<string, unknown>;
}

/**
 * `count` flags: every third is a rollout, a property condition, or multivariate (some of those with conditions
 * too). The first is the readiness flag, so every subset keeps it.
 */
export function flagDefinitions(count: number): FlagDefinition[] {
  const out: FlagDefinition[] = [];
  for (let i = 0; i < count; i++) {
    const rollout = 10 + ((i * 37) % 91);
    if (i === 0) {
      out.push({ key: READY_FLAG, name: 'Stored person is applied', filters: { groups: [{ properties: [person('plan', 'exact', ['enterprise'])], rollout_percentage: 100 }] } });
    } else if (i % 3 === 1) {
      out.push({ key: `bench-rollout-${i}`, name: `Rollout ${rollout}%`, filters: { groups: [{ properties: [], rollout_percentage: rollout }] } });
    } else if (i % 3 === 0) {
      const properties = CONDITIONS[i % CONDITIONS.length]!;
      out.push({ key: `bench-condition-${i}`, name: 'Person condition', filters: { groups: [{ properties, rollout_percentage: rollout }, { properties: [person('plan', 'exact', ['free'])], rollout_percentage: 100 }] } });
    } else {
      const n = 2 + (i % 3);
      const share = Math.floor(100 / n);
      const variants = Array.from({ length: n }, (_, v) => ({ key: `variant-${v}`, rollout_percentage: v === n - 1 ? 100 - share * (n - 1) : share }));
      const properties = i % 2 === 0 ? CONDITIONS[i % CONDITIONS.length]! : [];
      out.push({ key: `bench-experiment-${i}`, name: `Experiment with ${n} variants`, filters: { groups: [{ properties, rollout_percentage: 100 }], multivariate: { variants } } });
    }
  }
  return out;
}

/** Creates the flags; returns their ids by key. Throws with the server's answer if one is refused. */
export async function createFlags(api: QuillApi, defs: FlagDefinition[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const def of defs) {
    const res = await api.api('POST', '/api/projects/@current/feature_flags/', { ...def, active: true });
    if (res.status !== 201) throw new Error(`creating flag ${def.key} failed: ${res.status} ${JSON.stringify(res.body)}`);
    ids.set(def.key, res.body.id as number);
  }
  return ids;
}

/** Stores the person through public ingestion, as an SDK's identify would. */
export async function capturePerson(api: QuillApi): Promise<void> {
  const res = await api.publicPost('/capture/', {
    api_key: PROJECT_KEY,
    event: '$identify',
    distinct_id: PERSON_DISTINCT_ID,
    properties: { $set: PERSON_PROPERTIES, $lib: 'posthog-node' },
    timestamp: new Date().toISOString(),
  });
  if (res.status !== 200) throw new Error(`capturing the person failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/**
 * Waits until `/flags/` sees the stored person on every worker: the readiness flag must be true `streak` times in
 * a row (requests are spread over the workers). Returns the milliseconds waited.
 */
export async function waitForPerson(api: QuillApi, timeoutMs = 60_000, streak = 20): Promise<number> {
  const t0 = performance.now();
  let run = 0;
  while (run < streak) {
    const flags = await api.flags(PERSON_DISTINCT_ID);
    run = flags[READY_FLAG] === true ? run + 1 : 0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`the stored person did not reach /flags/ within ${timeoutMs} ms`);
    if (run === 0) await new Promise((r) => setTimeout(r, 50));
  }
  return Math.round(performance.now() - t0);
}
