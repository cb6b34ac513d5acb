/**
 * `GET /api/projects/:id/feature_flags/:id/usage/?days=30` (Quill's): a flag's evaluations per UTC day (by
 * `/flags/`, `/decide/` and OFREP) and its `$feature_flag_called` events, every day of the range (zeros included,
 * oldest first), with `last_called_at` and the flag's `status`. Every worker writes what it counted first, so the
 * answer holds every evaluation answered before the request (src/worker/flag-usage.ts).
 */
import { Errors } from '../../protocol/errors.js';
import { dayOf, flushUsageEverywhere } from '../flag-usage.js';
import { json } from '../reply.js';
import { flagOf, usageFields } from './feature-flags.js';
import { intParam, projectIdOf, type OpHandler } from './types.js';

const MAX_DAYS = 366;

export const flagUsage: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const id = intParam(item, 'id');
  const rawDays = item.meta.query.days ?? '30';
  if (!/^\d+$/.test(rawDays) || Number(rawDays) < 1 || Number(rawDays) > MAX_DAYS) {
    throw Errors.validation('days', 'invalid_input', `days must be an integer from 1 to ${MAX_DAYS}.`);
  }
  const days = Number(rawDays);
  await flushUsageEverywhere(rt);
  const flag = flagOf(rt.meta, projectId, id);
  const today = Date.now();
  const results = [];
  let evaluations = 0;
  let called = 0;
  for (let i = days - 1; i >= 0; i--) {
    const date = dayOf(today - i * 86_400_000);
    const row = rt.meta.flagUsage.get([projectId, id, date]);
    results.push({ date, evaluations: row?.evaluations ?? 0, called: row?.called ?? 0 });
    evaluations += row?.evaluations ?? 0;
    called += row?.called ?? 0;
  }
  return json(200, { flag_id: flag.id, key: flag.key, days, results, total: { evaluations, called }, ...usageFields(rt.meta, flag) });
};
