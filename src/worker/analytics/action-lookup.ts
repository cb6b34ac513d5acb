/**
 * The project's actions as the analyses resolve entities of type `actions` (src/domain/analytics/filter-params.ts):
 * read from the metadata environment when an entity names one, deleted ones included (an insight naming an action
 * that was deleted still answers, as PostHog's do). Actions are written by any thread: the first lookup of a
 * request reads the newest snapshot.
 */
import type { ActionDefinition, ActionLookup } from '../../domain/analytics/action-filter.js';
import type { WorkerRuntime } from '../runtime.js';

export function actionLookup(rt: WorkerRuntime, team: number): ActionLookup {
  let fresh = false;
  const seen = new Map<number, ActionDefinition | undefined>();
  return (id) => {
    if (!fresh) {
      rt.meta.env.resetReadTxn();
      fresh = true;
    }
    if (!seen.has(id)) {
      const a = rt.meta.actions.get([team, id]);
      seen.set(id, a ? { id: a.id, name: a.name, steps: a.steps } : undefined);
    }
    return seen.get(id);
  };
}
