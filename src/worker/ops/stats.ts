/**
 * `GET /_stats`: ingestion counters of every shard, for operators and the benchmarks, which use it to tell when
 * everything acknowledged has been applied. `backlog` is the number of events logged (and acknowledged) but not
 * yet applied; the other counters are totals since the server started.
 *
 * Who may read it: the owner of an organization (with a key holding `organization:read`), or the operator key
 * (QUILL_OPERATOR_KEY). Every counter here is node-wide: a count or a latency summed over all projects, carrying
 * no project's ids, names, events or properties. An owner sees them because they describe the instance their
 * data goes through (is my data applied yet, is the disk keeping up), not another tenant's data; an owner also
 * gets `organization`: the ids of their own projects, and nothing of other organizations. The operator sees the
 * same counters and every organization with its projects. Per-project counters, should they come, must be
 * filtered like `visibleOrganizations` below.
 */
import { all } from '../../stores/lmdb-env.js';
import { Errors } from '../../protocol/errors.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import type { LoopDelay } from '../loop-delay.js';
import { LEVEL_OWNER, userOf } from './accounts.js';
import type { OpHandler } from './types.js';
import type { Principal } from '../../protocol/worker-messages.js';
import { principalOf } from './types.js';
import type { PersonExportStats, ShardExportStats } from '../export/export-service.js';
import { processMemory } from '../../observability/process-memory.js';
import { mergeServiceStats } from '../service.js';
import type { DeadLetter } from '../../stores/events/dead-letter-store.js';

/** Organizations (and their project ids) the caller may see: their own, or all of them for the operator. */
function visibleOrganizations(rt: WorkerRuntime, organizationId: number | null): { id: number; name: string; projects: number[] }[] {
  const orgs = all(rt.meta.organizations.getRange().map((e) => e.value)).filter((o) => organizationId === null || o.id === organizationId);
  const projects = all(rt.meta.projects.getRange().map((e) => e.value));
  return orgs.map((o) => ({ id: o.id, name: o.name, projects: projects.filter((p) => p.organization_id === o.id).map((p) => p.id) }));
}

/**
 * Node-wide operator endpoints (/_stats, /_backup) are for the operator key or an organization's owner: resolves
 * the owner's organization (null for the operator), or refuses with `denied`.
 */
export function ownerOrOperator(rt: WorkerRuntime, principal: Principal, denied: string): number | null {
  if (principal.operator) return null;
  const user = userOf(rt.meta, principal.userId);
  if (user.membership_level < LEVEL_OWNER) throw Errors.permissionDenied(denied);
  return user.organization_id;
}

interface ShardStats {
  droppedEvents: number;
  deadLetteredEvents: number;
  personUpdatesRejected: number;
}

interface WorkerStats {
  shards: ShardStats[];
  memoryRefusals: number;
  export?: { shards: ShardExportStats[]; persons: PersonExportStats | null };
  dropped: Record<string, number>;
  eventLoop: LoopDelay & { worker: number };
  /** Hosted services' parts (src/worker/service.ts), merged across workers under each service's name. */
  services?: Record<string, Record<string, unknown>>;
}

/** Node-wide drop counts by reason: what the workers' capture requests dropped and what the shards did not apply. */
function droppedOf(perWorker: readonly WorkerStats[]): Record<string, number> {
  const dropped: Record<string, number> = {};
  const add = (reason: string, n: number) => {
    if (n > 0) dropped[reason] = (dropped[reason] ?? 0) + n;
  };
  for (const w of perWorker) {
    for (const [reason, n] of Object.entries(w.dropped)) add(reason, n);
    for (const s of w.shards) {
      add('person_event_without_profile', s.droppedEvents);
      add('dead_letter', s.deadLetteredEvents);
    }
  }
  return dropped;
}

/** The process's memory against its budget (QUILL_MEMORY_MB; src/front/memory-guard.ts). */
function memoryOf(rt: WorkerRuntime, perWorker: readonly WorkerStats[]): Record<string, unknown> {
  const { resident, anonymous } = processMemory();
  return {
    resident_bytes: resident,
    anonymous_bytes: anonymous,
    budget_bytes: rt.config.memoryMb > 0 ? Math.round(rt.config.memoryMb * 1048576) : null,
    over_budget: rt.shared.memoryOver,
    refused_requests: perWorker.reduce((n, w) => n + (w.memoryRefusals ?? 0), 0),
  };
}

export const ingestionStats: OpHandler = async (item, rt) => {
  const principal = principalOf(item);
  const organizationId = ownerOrOperator(rt, principal, 'Only organization owners (or the operator key) can read /_stats.');
  const perWorker = await rt.peers.all<WorkerStats>({ kind: 'stats' });
  const organizations = visibleOrganizations(rt, organizationId);
  return json(200, {
    workers: rt.workerCount,
    data_format_version: rt.meta.formatVersion() ?? 1,
    shards: perWorker.flatMap((w) => w.shards),
    dropped: droppedOf(perWorker),
    // Events stored with part of what they asked for refused, by PostHog's warning names.
    ingestion_warnings: {
      person_properties_size_violation: perWorker.reduce((n, w) => n + w.shards.reduce((m, s) => m + (s.personUpdatesRejected ?? 0), 0), 0),
    },
    event_loop: perWorker.map((w) => w.eventLoop),
    // Hosted services, e.g. `recordings`: their shards, what they acknowledged and deleted.
    ...mergeServiceStats(perWorker.map((w) => w.services)),
    memory: memoryOf(rt, perWorker),
    // The ClickHouse export, when on: per shard what it exported and its lag, and the person changes' exporter.
    ...(rt.export
      ? { export: { shards: perWorker.flatMap((w) => w.export?.shards ?? []), persons: perWorker.map((w) => w.export?.persons).find((p) => p) ?? null } }
      : {}),
    ...(principal.operator ? { organizations } : { organization: organizations[0] ?? null }),
  });
};

/** Entries `GET /_dead_letters` answers at most, and the text of each it shows. */
const DEAD_LETTERS_MAX = 200;
const DEAD_LETTER_TEXT = 16 * 1024;

/**
 * `GET /_dead_letters?limit=&reason=`: what the shards set aside (acknowledged events or records the apply could
 * not apply, with the reason) and the samples of what capture dropped past the shape bounds, newest first. The
 * operator key sees everything; an organization's owner sees only entries of its own projects (a record set aside
 * whole belongs to no project: operator only).
 */
export const deadLetters: OpHandler = async (item, rt) => {
  const principal = principalOf(item);
  const organizationId = ownerOrOperator(rt, principal, 'Only organization owners (or the operator key) can read /_dead_letters.');
  const visible = principal.operator ? null : new Set(visibleOrganizations(rt, organizationId).flatMap((o) => o.projects));
  const q = item.meta.query;
  const limit = Math.min(DEAD_LETTERS_MAX, Math.max(1, Number(q.limit ?? 50) || 50));
  const parts = await rt.peers.all<DeadLetter[]>({ kind: 'dead-letters' });
  const entries = parts.flat()
    .filter((e) => (visible === null || (e.team !== null && visible.has(e.team))) && (q.reason === undefined || e.reason === q.reason))
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
    .slice(0, limit)
    .map((e) => ({ ...e, content: e.content.length > DEAD_LETTER_TEXT ? e.content.slice(0, DEAD_LETTER_TEXT) : e.content, content_length: e.content.length }));
  return json(200, { results: entries });
};
