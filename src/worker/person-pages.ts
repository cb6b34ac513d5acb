/**
 * Every person of a project, newest first, read a page at a time with a slice's yield between pages
 * (src/worker/analytics/slices.ts): a project of millions of persons takes seconds to decode, and a list, a cohort
 * or a blast radius that reads them all must not hold the thread for that long. Pages are read by key, so no LMDB
 * read transaction stays open across a yield; a person created meanwhile (a higher id) is not seen, as if the
 * read had begun before it.
 */
import type { PersonRow } from '../stores/persons/person-store.js';
import { Slicer } from './analytics/slices.js';
import type { WorkerRuntime } from './runtime.js';

const PAGE = 256;

export async function* eachPerson(rt: WorkerRuntime, team: number): AsyncGenerator<PersonRow> {
  const slicer = new Slicer();
  let before = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const page = rt.persons.personsBefore(team, before, PAGE);
    for (const row of page) yield row;
    if (page.length < PAGE) return;
    before = page[page.length - 1]!.id;
    await slicer.pace();
  }
}
