/**
 * Which persons belong to which cohorts, answered the way /flags/ answers it: static cohorts from the stored
 * membership rows, property cohorts by the flag engine over the person's stored properties. The compiled cohorts
 * come from the worker's flag-set cache, which every cohort write refreshes on every worker (replicate).
 */
import { matchesCohort, type CompiledCohorts, type EvaluationContext } from '../../../domain/flags/index.js';
import type { PersonRow } from '../../../stores/persons/person-store.js';
import type { WorkerRuntime } from '../../runtime.js';
import { eachPerson } from '../../person-pages.js';

/** What the engine needs to match one stored person (no request overrides, no groups). */
export function personContext(row: PersonRow, staticCohortIds: ReadonlySet<number>, now: Date): EvaluationContext {
  return {
    distinctId: row.distinct_ids[0] ?? '',
    personProperties: row.properties,
    groups: {},
    groupProperties: {},
    hashKeyOverrides: {},
    staticCohortIds,
    personCreatedAt: row.created_at,
    now,
  };
}

export class CohortMembership {
  readonly cohorts: CompiledCohorts;
  private readonly now = new Date();

  constructor(private readonly rt: WorkerRuntime, private readonly team: number) {
    this.cohorts = rt.cache.flagSet(team).cohorts;
  }

  contextOf(row: PersonRow): EvaluationContext {
    return personContext(row, this.rt.persons.staticCohortIdsOf(this.team, row.id), this.now);
  }

  /** Whether `row` is in the (non-deleted) cohort; false for unknown or deleted cohorts. */
  contains(cohortId: number, row: PersonRow, ctx: EvaluationContext = this.contextOf(row)): boolean {
    return matchesCohort(this.cohorts, cohortId, ctx);
  }

  /** Ids of every non-deleted cohort `row` belongs to, ascending. */
  cohortIdsOf(row: PersonRow): number[] {
    const ctx = this.contextOf(row);
    return [...this.cohorts.byId.keys()].filter((id) => this.contains(id, row, ctx)).sort((a, b) => a - b);
  }

  /**
   * The project's persons in the cohort, newest first. A static cohort keeps its stored members even when
   * soft-deleted; a deleted property cohort has none (the engine no longer knows it).
   */
  async members(cohort: { id: number; is_static: boolean }): Promise<PersonRow[]> {
    const rows: PersonRow[] = [];
    if (cohort.is_static) {
      for (const id of this.rt.persons.staticCohortMembers(this.team, cohort.id)) {
        const row = this.rt.persons.person(this.team, id);
        if (row) rows.push(row);
      }
      return rows.sort((a, b) => b.id - a.id);
    }
    if (!this.cohorts.byId.has(cohort.id)) return rows;
    for await (const row of eachPerson(this.rt, this.team)) if (this.contains(cohort.id, row)) rows.push(row);
    return rows;
  }
}
