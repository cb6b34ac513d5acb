/**
 * The persons' activity log (analytics.md §8.5): scope `Person`, item id = the person's numeric id, entries
 * `updated`, `deleted`, `split_person` and `delete_property`. Like PostHog, property values are not copied into
 * the log (they may be personal data): changes name the field, not its before/after.
 */
import type { ActivityChange } from '../../../domain/model.js';
import { Errors } from '../../../protocol/errors.js';
import type { WorkerRuntime } from '../../runtime.js';
import { activityOf, activityPage, logActivity } from '../activity-log.js';
import { projectIdOf, type OpHandler } from '../types.js';
import { answer, findPerson } from './person-view.js';

export type PersonActivity = 'updated' | 'deleted' | 'split_person' | 'delete_property';

export async function logPersonActivity(
  rt: WorkerRuntime,
  entry: { team: number; userId: number; personId: number; personUuid: string; activity: PersonActivity; changes: ActivityChange[] },
): Promise<void> {
  await rt.meta.write(() =>
    logActivity(rt.meta, {
      project_id: entry.team,
      user_id: entry.userId,
      activity: entry.activity,
      scope: 'Person',
      item_id: String(entry.personId),
      detail: {
        changes: entry.changes, merge: null, trigger: null,
        // PostHog names update entries by nothing and the others by the person's uuid.
        name: entry.activity === 'updated' ? null : entry.personUuid,
        short_id: null, type: null,
      },
    }));
}

export const personActivity: OpHandler = (item, rt) => {
  const team = projectIdOf(item);
  const raw = item.params.id ?? '';
  // A deleted person's history stays readable by its numeric id; a uuid must still name a live person.
  let personId: number;
  if (/^\d+$/.test(raw)) personId = Number(raw);
  else {
    const row = findPerson(rt.persons, team, raw);
    if (row === null) throw Errors.validation(null, 'invalid_input', 'The ID provided does not look like a personID.');
    if (row === undefined) throw Errors.notFound('Person not found.');
    personId = row.id;
  }
  const entries = activityOf(rt.meta, team, (e) => e.scope === 'Person' && e.item_id === String(personId));
  return answer(item, 200, activityPage(rt.meta, entries, item.meta), 'activity.csv');
};

export const allPersonsActivity: OpHandler = (item, rt) => {
  const team = projectIdOf(item);
  return answer(item, 200, activityPage(rt.meta, activityOf(rt.meta, team, (e) => e.scope === 'Person'), item.meta), 'activity.csv');
};
