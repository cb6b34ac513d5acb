import { Errors } from '../../protocol/errors.js';
import type { Principal, Reply, TaskItem } from '../../protocol/worker-messages.js';
import type { WorkerRuntime } from '../runtime.js';

/** One operation a worker can perform for the front; named in the route table (src/front/routes.ts). */
export type OpHandler = (item: TaskItem, rt: WorkerRuntime) => Promise<Reply> | Reply;

/** The authenticated caller of a private endpoint (the front only routes such ops with a principal). */
export function principalOf(item: TaskItem): Principal {
  if (!item.principal) throw Errors.notAuthenticated();
  return item.principal;
}

/** The project of a project-scoped private endpoint, resolved and access-checked by the front. */
export function projectIdOf(item: TaskItem): number {
  const p = principalOf(item);
  if (p.projectId === null) throw Errors.notFound('Project not found.');
  return p.projectId;
}

/** The body of a management request as an object (the front has parsed and schema-checked it). */
export function bodyOf(item: TaskItem): Record<string, unknown> {
  const b = item.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

/** An integer route parameter; anything else is an unknown resource. */
export function intParam(item: TaskItem, name: string, notFound = 'Not found.'): number {
  const raw = item.params[name] ?? '';
  if (!/^\d+$/.test(raw)) throw Errors.notFound(notFound);
  return Number(raw);
}

export const nowIso = (): string => new Date().toISOString();
