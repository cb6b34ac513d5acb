/**
 * Events keep the person id they had when they were ingested; a later merge moves that person into another one
 * (design.md §1). Analyses count an event for the person its distinct id belongs to now (analytics.md §1.2), so
 * each query resolves ingestion-time ids through the merge overrides: a table indexed by person id (0 = not
 * merged), read once per row with no hashing.
 */
import type { PersonStore } from '../../stores/persons/person-store.js';

/** Resolutions built per persons store and project, with the merge count they were built at. */
const built = new WeakMap<PersonStore, Map<number, { count: number; resolution: PersonResolution }>>();

export class PersonResolution {
  private constructor(
    private readonly table: Uint32Array | null,
    /** Persons something was merged into (their created_at may be older than their own events say). */
    readonly mergeTargets: ReadonlySet<number> = new Set(),
  ) {}

  /**
   * A project's overrides, following chains (a merged into b, b later into c: a resolves to c). Built from every
   * override once per merge count and reused until the next merge: reading tens of thousands of overrides is
   * milliseconds of work no query should redo (ids above the table resolve to themselves, so persons created since
   * it was built need no rebuild).
   */
  static of(persons: PersonStore, team: number, maxPersonId: number): PersonResolution {
    const count = persons.mergeCount(team);
    let byTeam = built.get(persons);
    if (!byTeam) built.set(persons, (byTeam = new Map()));
    const cached = byTeam.get(team);
    if (cached && cached.count === count) return cached.resolution;
    const resolution = PersonResolution.read(persons, team, maxPersonId);
    byTeam.set(team, { count, resolution });
    return resolution;
  }

  private static read(persons: PersonStore, team: number, maxPersonId: number): PersonResolution {
    const next = new Map<number, number>();
    for (const [from, to] of persons.mergesOf(team)) next.set(from, to);
    if (next.size === 0) return new PersonResolution(null);
    const table = new Uint32Array(maxPersonId + 1);
    const targets = new Set<number>();
    for (const from of next.keys()) {
      let to = next.get(from)!;
      for (let hops = 0; hops < 32 && next.has(to); hops++) to = next.get(to)!;
      if (from < table.length && to < table.length) table[from] = to;
      targets.add(to);
    }
    return new PersonResolution(table, targets);
  }

  /** The current person of an ingestion-time person id (0 stays 0: no person). */
  resolve(id: number): number {
    const t = this.table;
    if (t === null || id >= t.length) return id;
    return t[id]! || id;
  }

  /** A block's person column resolved (the column itself when nothing was merged). */
  resolveAll(ids: Uint32Array): Uint32Array {
    const t = this.table;
    if (t === null) return ids;
    const out = new Uint32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      out[i] = (id < t.length ? t[id]! : 0) || id;
    }
    return out;
  }
}
