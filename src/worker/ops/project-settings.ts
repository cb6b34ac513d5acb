/**
 * PATCH /api/projects/:id/: the project settings analyses read: `timezone` (buckets and date boundaries,
 * analytics.md §0.4), `test_account_filters` (ANDed in with `filter_test_accounts=true`), `path_cleaning_filters`
 * (§7.1), and the name.
 */
import { AnalyticsInputError } from '../../domain/analytics/errors.js';
import { parseFilters } from '../../domain/analytics/property-filters.js';
import { cleaningRules } from '../../domain/analytics/paths.js';
import { isTimeZone } from '../../domain/analytics/time-zone.js';
import { Errors } from '../../protocol/errors.js';
import { replicate } from '../replication.js';
import { json } from '../reply.js';
import { checkText, MAX_LENGTH } from '../../domain/account-fields.js';
import { fieldValue, requireAdmin, serializeProject, userOf } from './accounts.js';
import type { OpHandler } from './types.js';
import { bodyOf, principalOf, projectIdOf } from './types.js';

export const updateProject: OpHandler = async (item, rt) => {
  const id = projectIdOf(item);
  requireAdmin(userOf(rt.meta, principalOf(item).userId));
  const body = bodyOf(item);
  const name = fieldValue(checkText('name', body.name, { max: MAX_LENGTH.projectName, required: false }));
  if (body.timezone !== undefined && (typeof body.timezone !== 'string' || !isTimeZone(body.timezone))) {
    throw Errors.validation('timezone', 'invalid_choice', `"${String(body.timezone)}" is not a valid choice.`);
  }
  if (body.test_account_filters !== undefined || body.path_cleaning_filters !== undefined) {
    try {
      parseFilters(body.test_account_filters, 'test_account_filters');
      cleaningRules(body.path_cleaning_filters, 'path_cleaning_filters');
    } catch (error) {
      if (error instanceof AnalyticsInputError) throw Errors.validation(error.attr, error.code, error.message);
      throw error;
    }
  }
  const project = await rt.meta.write(() => {
    const current = rt.meta.projects.get(id);
    if (!current) throw Errors.notFound('Project not found.');
    const next = { ...current };
    if (name !== undefined) next.name = name;
    if (typeof body.timezone === 'string') next.timezone = body.timezone;
    if (Array.isArray(body.test_account_filters)) next.test_account_filters = body.test_account_filters;
    if (Array.isArray(body.path_cleaning_filters)) next.path_cleaning_filters = cleaningRules(body.path_cleaning_filters, 'path_cleaning_filters');
    rt.meta.projects.put(id, next);
    return next;
  });
  await replicate(rt, { projects: true, projectId: id });
  return json(200, serializeProject(rt.meta, project));
};
