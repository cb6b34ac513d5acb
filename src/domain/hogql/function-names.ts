/**
 * The function names a HogQL query may call, for the console's SQL editor to complete (its build passes this list
 * into the bundle: src/console/build.ts). Read from the tables the evaluator uses, so the editor offers exactly
 * what runs: the scalar functions, the aggregates and their `-If` forms; not the refused ones or the aliases
 * (they run, but each has its canonical name in the list), nor the planner's internal `$…` helpers.
 */
import { AGGREGATES } from './aggregate-functions.js';
import { FUNCTIONS, REFUSED_FUNCTIONS } from './functions.js';

export function hogqlFunctionNames(): string[] {
  const names = new Set(Object.keys(FUNCTIONS));
  for (const agg of Object.keys(AGGREGATES)) {
    names.add(agg);
    names.add(`${agg}If`);
  }
  for (const refused of Object.keys(REFUSED_FUNCTIONS)) names.delete(refused);
  for (const name of names) if (name.startsWith('$')) names.delete(name);
  return [...names].sort((a, b) => a.localeCompare(b));
}
