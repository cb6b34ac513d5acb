/**
 * The event-definitions API (seed-interface.md, ingestion-and-api.md §3.1). Definitions are created by ingestion
 * on the first sight of a name, which also keeps `last_seen_at` (src/worker/ingest/ingest-service.ts); this API
 * lists, retrieves and edits the descriptive fields.
 *
 * `volume_30_day` is computed when read: the number of stored events with that name and a timestamp in the last
 * 30 days, counted on every shard (PostHog filled it from a periodic job; counting on read keeps it exact).
 * `last_calculated_at` is therefore the time of the read. The list is ordered by `volume_30_day` descending, then
 * by name (PostHog's default ordering of that era), and paginated with limit/offset. `event_type` picks the rows:
 * `event` (the default), `event_custom`, `event_posthog`, `action_event` (the project's actions as rows with
 * `is_action: true` and their `action_id`) or `all`.
 */
import type { Action, EventDefinition } from '../../domain/model.js';
import { Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { paginate } from '../pagination.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { userRefById } from './accounts.js';
import { changesBetween, logActivity } from './activity-log.js';
import { volumesEverywhere } from './events/scatter.js';
import { bodyOf, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';
import { pyType } from '../../domain/py-type.js';
import { descriptiveChanges } from './definition-fields.js';

const VOLUME_WINDOW_MS = 30 * 86_400_000;
/** Fields a PATCH may change; everything else in the body is read-only and ignored. */
const WRITABLE = ['owner', 'description', 'tags', 'verified', 'post_to_chat'] as const;

function definitionsOf(meta: MetaStore, team: number): EventDefinition[] {
  const out: EventDefinition[] = [];
  for (const { value } of meta.eventDefinitions.getRange({ start: [team, ''], end: [team + 1, ''] })) out.push(value);
  return out;
}

/** Definitions are written by the apply loop of any worker: wait for it, then read the newest snapshot. */
async function settledDefinitions(rt: WorkerRuntime): Promise<void> {
  await rt.ingest.appliedEverywhere();
  rt.meta.env.resetReadTxn();
}

function definitionById(meta: MetaStore, team: number, id: string | undefined): EventDefinition {
  const found = id ? definitionsOf(meta, team).find((d) => d.id === id) : undefined;
  if (!found) throw Errors.notFound();
  return found;
}

function serializeDefinition(meta: MetaStore, d: EventDefinition, volume: number, calculatedAt: string): Record<string, unknown> {
  const updatedAt = d.updated_at ?? d.created_at;
  return {
    id: d.id,
    name: d.name,
    owner: d.owner,
    description: d.description ?? '',
    tags: d.tags,
    volume_30_day: volume,
    query_usage_30_day: null,
    created_at: d.created_at,
    updated_at: updatedAt,
    updated_by: userRefById(meta, d.updated_by),
    last_seen_at: d.last_seen_at,
    last_updated_at: updatedAt,
    verified: d.verified,
    verified_at: d.verified_at,
    verified_by: userRefById(meta, d.verified_by),
    is_action: false,
    action_id: null,
    is_calculating: false,
    last_calculated_at: calculatedAt,
    created_by: null,
    post_to_chat: d.post_to_chat,
  };
}

async function serializeOne(rt: WorkerRuntime, d: EventDefinition, now: number): Promise<Record<string, unknown>> {
  const volumes = await volumesEverywhere(rt, d.project_id, [d.name], now - VOLUME_WINDOW_MS);
  return serializeDefinition(rt.meta, d, volumes.get(d.name) ?? 0, new Date(now).toISOString());
}

/**
 * An action as a row of the list (`event_type=action_event` or `all`), as PostHog's union of its two tables shows
 * it: no definition id, `is_action: true` and `action_id`; the event-only fields null.
 */
function serializeActionRow(meta: MetaStore, a: Action): Record<string, unknown> {
  return {
    id: null, name: a.name, owner: null, description: a.description, tags: a.tags, volume_30_day: null, query_usage_30_day: null,
    created_at: a.created_at, updated_at: a.updated_at, updated_by: null, last_seen_at: null, last_updated_at: a.updated_at,
    verified: false, verified_at: null, verified_by: null, is_action: true, action_id: a.id, is_calculating: false,
    last_calculated_at: a.updated_at, created_by: userRefById(meta, a.created_by), post_to_chat: false,
  };
}

/** `event_type`: which rows the list holds (PostHog's EventDefinitionType; `event` by default). */
const EVENT_TYPES: Readonly<Record<string, { events: ((name: string) => boolean) | null; actions: boolean }>> = {
  event: { events: () => true, actions: false },
  event_custom: { events: (name) => !name.startsWith('$'), actions: false },
  event_posthog: { events: (name) => name.startsWith('$'), actions: false },
  action_event: { events: null, actions: true },
  all: { events: () => true, actions: true },
};

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Event definitions by volume, then (`action_event`, `all`) the project's live actions by name. */
export const listEventDefinitions: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const now = item.meta.now;
  const eventType = item.meta.query.event_type || 'event';
  const wanted = EVENT_TYPES[eventType];
  if (!wanted) throw Errors.validation('event_type', 'invalid_choice', `"${eventType}" is not a valid choice: use ${Object.keys(EVENT_TYPES).join(', ')}.`);
  await settledDefinitions(rt);
  const search = item.meta.query.search?.toLowerCase() ?? '';
  const wantsEvent = wanted.events;
  const defs = wantsEvent === null ? [] : definitionsOf(rt.meta, team).filter((d) => d.name.toLowerCase().includes(search) && wantsEvent(d.name));
  const volumes = await volumesEverywhere(rt, team, defs.map((d) => d.name), now - VOLUME_WINDOW_MS);
  const volumeOf = (d: EventDefinition) => volumes.get(d.name) ?? 0;
  defs.sort((a, b) => volumeOf(b) - volumeOf(a) || byName(a, b));
  const calculatedAt = new Date(now).toISOString();
  const rows = defs.map((d) => serializeDefinition(rt.meta, d, volumeOf(d), calculatedAt));
  if (wanted.actions) {
    const actions = rt.meta.actionsOf(team).filter((a) => !a.deleted && a.name.toLowerCase().includes(search)).sort(byName);
    rows.push(...actions.map((a) => serializeActionRow(rt.meta, a)));
  }
  return json(200, paginate(rows, item.meta));
};

export const retrieveEventDefinition: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  await settledDefinitions(rt);
  return json(200, await serializeOne(rt, definitionById(rt.meta, team, item.params.id), item.meta.now));
};

type Changes = Partial<Pick<EventDefinition, (typeof WRITABLE)[number]>>;

/** The writable fields of a PATCH body, type-checked; DRF's codes and messages for each kind of mistake. */
function changesOf(body: Record<string, unknown>, meta: MetaStore, organizationId: number): Changes {
  const out: Changes = {};
  if ('owner' in body) {
    const v = body.owner;
    if (v === null) out.owner = null;
    else {
      const id = typeof v === 'number' && Number.isSafeInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null;
      if (id === null) throw Errors.validation('owner', 'incorrect_type', `Incorrect type. Expected pk value, received ${pyType(v)}.`);
      const user = meta.users.get(id);
      if (!user || user.organization_id !== organizationId) {
        throw Errors.validation('owner', 'does_not_exist', `Invalid pk "${id}" - object does not exist.`);
      }
      out.owner = id;
    }
  }
  Object.assign(out, descriptiveChanges(body));
  for (const field of ['verified', 'post_to_chat'] as const) {
    if (!(field in body)) continue;
    const v = body[field];
    if (typeof v !== 'boolean') throw Errors.validation(field, 'invalid_input', 'Must be a valid boolean.');
    out[field] = v;
  }
  return out;
}

/**
 * PATCH: only `owner`, `description`, `tags`, `verified`, `post_to_chat` change; read-only fields in the body are
 * ignored. `tags` are trimmed, with blanks and repeats dropped. Every PATCH stamps `updated_at`/`updated_by`. `verified` turning true records who verified it and
 * when; turning false clears both. The change is logged (scope `EventDefinition`, activity `changed`).
 */
export const updateEventDefinition: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const principal = principalOf(item);
  const changes = changesOf(bodyOf(item), rt.meta, principal.organizationId);
  await settledDefinitions(rt);
  const found = definitionById(rt.meta, team, item.params.id);
  const updated = await rt.meta.write(() => {
    // Re-read inside the transaction: the apply loop may have moved last_seen_at meanwhile.
    const before = rt.meta.eventDefinitions.get([team, found.name]);
    if (!before || before.id !== found.id) throw Errors.notFound();
    const now = nowIso();
    const next: EventDefinition = { ...before, ...changes, updated_at: now, updated_by: principal.userId };
    if (changes.verified === true && !before.verified) {
      next.verified_at = now;
      next.verified_by = principal.userId;
    } else if (changes.verified === false) {
      next.verified_at = null;
      next.verified_by = null;
    }
    rt.meta.eventDefinitions.put([team, before.name], next);
    const logged = changesBetween('EventDefinition', before as unknown as Record<string, unknown>, next as unknown as Record<string, unknown>, WRITABLE);
    logActivity(rt.meta, {
      project_id: team, user_id: principal.userId, activity: 'changed', scope: 'EventDefinition', item_id: before.id,
      detail: { changes: logged, merge: null, trigger: null, name: before.name, short_id: null, type: null },
    });
    return next;
  });
  return json(200, await serializeOne(rt, updated, item.meta.now));
};
