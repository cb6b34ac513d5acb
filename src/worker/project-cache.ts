/**
 * What a worker keeps in memory so that /flags/ and ingestion never read the metadata environment on their hot
 * path: projects by token and id, each project's compiled flag set and its group types. Entries are rebuilt when
 * the worker that changed them broadcasts `reload` (src/worker/replication.ts), before its API call returns.
 */
import { compileFlagSet, type CompiledFlagSet } from '../domain/flags/index.js';
import type { GroupTypes, Project } from '../domain/model.js';
import type { MetaStore } from '../stores/meta/meta-store.js';

export class ProjectCache {
  private projectsByToken = new Map<string, Project>();
  private projectsById = new Map<number, Project>();
  private readonly flagSets = new Map<number, CompiledFlagSet>();
  private readonly groupTypesById = new Map<number, GroupTypes>();
  /** Values derived from a project's flags (e.g. the local-evaluation payload and its ETag), dropped with them. */
  private readonly derived = new Map<number, Map<string, unknown>>();

  constructor(private readonly meta: MetaStore) {
    this.reloadProjects();
  }

  projectByToken(token: string): Project | undefined {
    return this.projectsByToken.get(token);
  }

  project(id: number): Project | undefined {
    return this.projectsById.get(id);
  }

  groupTypes(projectId: number): GroupTypes {
    let types = this.groupTypesById.get(projectId);
    if (!types) {
      types = this.meta.groupTypes.get(projectId) ?? {};
      this.groupTypesById.set(projectId, types);
    }
    return types;
  }

  /** Group type mapping in PostHog's wire form: index (as a string) -> name. */
  groupTypeMapping(projectId: number): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, index] of Object.entries(this.groupTypes(projectId))) out[String(index)] = name;
    return out;
  }

  flagSet(projectId: number): CompiledFlagSet {
    let set = this.flagSets.get(projectId);
    if (!set) {
      set = compileFlagSet(this.meta.flagsOf(projectId), this.meta.cohortsOf(projectId), this.groupTypeMapping(projectId));
      this.flagSets.set(projectId, set);
    }
    return set;
  }

  /** Memoises `compute()` for a project until its flags, cohorts or group types change. */
  memo<T>(projectId: number, name: string, compute: () => T): T {
    let entries = this.derived.get(projectId);
    if (!entries) this.derived.set(projectId, (entries = new Map()));
    if (!entries.has(name)) entries.set(name, compute());
    return entries.get(name) as T;
  }

  /** Drops what changed; the next use rebuilds it from the metadata environment. */
  invalidate(what: { projectId?: number | null; projects?: boolean }): void {
    if (what.projects) this.reloadProjects();
    if (what.projectId == null) {
      this.flagSets.clear();
      this.groupTypesById.clear();
      this.derived.clear();
    } else {
      this.flagSets.delete(what.projectId);
      this.groupTypesById.delete(what.projectId);
      this.derived.delete(what.projectId);
    }
  }

  private reloadProjects(): void {
    const byToken = new Map<string, Project>();
    const byId = new Map<number, Project>();
    for (const { value } of this.meta.projects.getRange()) {
      byToken.set(value.api_token, value);
      byId.set(value.id, value);
    }
    this.projectsByToken = byToken;
    this.projectsById = byId;
  }
}
