/**
 * Remote flag evaluation: `/decide/` v1–v4 and `/flags/` v1–v2 (flags.md §5). The stored person and groups are
 * read from the persons environment (shared, read-only here except for experience-continuity hash keys), the
 * request's properties overlay them, and the pure engine evaluates the project's compiled flag set.
 */
import { randomUUID } from 'node:crypto';
import { evaluateFlags } from '../../domain/flags/index.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../domain/json-depth.js';
import type { Project } from '../../domain/model.js';
import { moduleConfigFields, SDK_SETTING_DEFAULTS, sdkSettingsOf, type SdkSettings } from '../../domain/sdk-settings.js';
import { Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import { json, jsonText } from '../reply.js';
import { flagMembersJson, membersOf, objectJson, type FlagsShape as Shape } from './flags-response.js';
import type { WorkerRuntime } from '../runtime.js';
import { decodeOrThrow } from './capture.js';
import { evaluationContextFor, writeHashKeyOverrides } from './evaluation-context.js';
import { projectForToken } from './public-auth.js';
import { sessionRecordingMember } from '../../domain/recordings/settings.js';
import type { OpHandler } from './types.js';


/**
 * The remote-config fields decide answers with (flags.md §5.5: the fields PostHog's fallback sends), with the
 * optional modules as the project's settings switch them (src/domain/sdk-settings.ts).
 */
export function configFields(settings: SdkSettings, hasFeatureFlags: boolean): Record<string, unknown> {
  return {
    config: { enable_collect_everything: true },
    editorParams: {},
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: ['gzip', 'gzip-js', 'lz64'],
    sessionRecording: false,
    ...moduleConfigFields(settings),
    elementsChainAsString: true,
    siteApps: [],
    hasFeatureFlags,
    defaultIdentifiedOnly: true,
  };
}

/**
 * The config fields as JSON members, for the project without and with flags, made once per project record: the
 * cache replaces a project's record when it changes (src/worker/project-cache.ts), so /flags/ pays a lookup.
 * `sessionRecording` is the project's own (src/domain/recordings/settings.ts), in the same record.
 */
const configMembers = new WeakMap<Project, readonly [string, string]>();
function configMembersOf(project: Project): readonly [string, string] {
  let members = configMembers.get(project);
  if (!members) {
    const settings = sdkSettingsOf(project.sdk_settings);
    const recording = sessionRecordingMember(project.recordings);
    const without = (hasFlags: boolean): string => {
      const { sessionRecording: _perProject, ...fields } = configFields(settings, hasFlags);
      return `${membersOf(fields)},${recording}`;
    };
    members = [without(false), without(true)];
    configMembers.set(project, members);
  }
  return members;
}

function versionOf(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number.parseInt(raw, 10);
  return Number.isFinite(n) ? n : 2;
}

function asObject(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

async function evaluate(item: TaskItem, rt: WorkerRuntime, shape: Shape, withConfig: boolean) {
  const decoded = (() => {
    try {
      return decodeOrThrow(item, rt);
    } catch (error) {
      if ((error as { status?: number }).status === 413) throw error;
      throw Errors.validation(null, 'malformed_data', (error as Error).message);
    }
  })();
  // Person and group properties reach recursive matching code: bound them as every client JSON is bounded.
  if (nestsDeeperThan(decoded.payload, MAX_JSON_DEPTH)) throw Errors.tooDeep(MAX_JSON_DEPTH);
  const body = asObject(decoded.payload);
  const token = [body.token, body.api_key, body.$token, item.meta.query.token, item.meta.query.api_key]
    .find((t) => typeof t === 'string' && t.trim() !== '') as string | undefined;
  const project = projectForToken(rt, token?.trim() ?? null, body.project_id, Errors.noApiKey);
  const set = rt.cache.flagSet(project.id);
  const base = withConfig ? configMembersOf(project)[set.flags.length > 0 ? 1 : 0] : '';
  const common = `"requestId":"${randomUUID()}","evaluatedAt":${Date.now()}`;

  if (body.disable_flags === true) return jsonText(200, objectJson(base, flagMembersJson([], shape), common));
  const rawId = body.distinct_id ?? body.$distinct_id;
  if (rawId === undefined || rawId === null) throw Errors.missingDistinctId();
  const distinctId = (typeof rawId === 'string' ? rawId : JSON.stringify(rawId)).slice(0, 200);
  const anonRaw = body.$anon_distinct_id ?? body.anon_distinct_id;
  const anonDistinctId = typeof anonRaw === 'string' && anonRaw !== '' ? anonRaw : null;

  if (anonDistinctId && set.continuityFlagKeys.length > 0) {
    await writeHashKeyOverrides(rt, project.id, distinctId, anonDistinctId, set.continuityFlagKeys);
  }
  const ctx = evaluationContextFor(rt, project.id, set, {
    distinctId,
    anonDistinctId,
    personProperties: asObject(body.person_properties ?? body.$properties),
    groups: asObject(body.groups ?? body.$groups),
    groupProperties: asObject(body.group_properties ?? body.$group_properties),
    deviceId: typeof (body.device_id ?? body.$device_id) === 'string' ? String(body.device_id ?? body.$device_id) : null,
  });
  const keys = body.flag_keys_to_evaluate ?? body.flag_keys;
  const contexts = body.evaluation_contexts ?? body.evaluation_environments;
  const results = evaluateFlags(set, ctx, {
    flagKeys: Array.isArray(keys) ? keys.map(String) : null,
    runtime: typeof body.evaluation_runtime === 'string' ? body.evaluation_runtime : null,
    evaluationContexts: Array.isArray(contexts) ? contexts.map(String) : null,
  });
  rt.flagUsage.noteResults(project.id, set, results, item.meta.now);
  return jsonText(200, objectJson(base, flagMembersJson(results, shape), common));
}

/** `/decide/?v=N`: v1 (default) keys, v2 enabled values, v3 all values + payloads, v4+ details. Always config. */
export const decide: OpHandler = (item, rt) => {
  const v = versionOf(item.meta.query.v ?? item.meta.query.version, 1);
  const shape: Shape = v <= 1 ? 'keys' : v === 2 ? 'enabled_values' : v === 3 ? 'all_values' : 'details';
  return evaluate(item, rt, shape, true);
};

/** `/flags/?v=N[&config=true]`: v1 = decide v3, v2+ details; neither v nor config means v=2 with config. */
export const flags: OpHandler = (item, rt) => {
  const q = item.meta.query;
  const rawV = q.v ?? q.version;
  const configParam = q.config;
  const noParams = rawV === undefined && configParam === undefined;
  const v = versionOf(rawV, configParam !== undefined ? 1 : 2);
  const withConfig = noParams || configParam === 'true' || configParam === '1';
  return evaluate(item, rt, v <= 1 ? 'all_values' : 'details', withConfig);
};

/** GET /decide/: the defaults posthog-js needs, without authentication (Django behaviour). */
export const decideDefaults: OpHandler = () => json(200, { ...configFields(SDK_SETTING_DEFAULTS, false), featureFlags: [] });

/** GET /flags/: a minimal empty answer, no evaluation (Rust behaviour). */
export const flagsDefaults: OpHandler = () => json(200, { flags: {}, featureFlags: {}, featureFlagPayloads: {}, errorsWhileComputingFlags: false, requestId: randomUUID() });
