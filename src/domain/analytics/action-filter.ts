/**
 * An action as the engine sees it: a filter tree (src/domain/analytics/property-filters.ts), OR over its steps,
 * each step an AND of its conditions, with PostHog's semantics:
 *
 *  - `event`: the event's name (no event: any event);
 *  - `url` on `$current_url`: `exact` (case-sensitive equality), `regex` (re2's unanchored `match`), `contains`
 *    (the default: SQL `LIKE '%url%'`, so case-sensitive, and `%` / `_` inside the url are LIKE's wildcards);
 *  - only when the step's event is `$autocapture`, on the event's `elements_chain`: `selector`, `tag_name`, and
 *    `text` / `href` with `text_matching` / `href_matching` (`exact` by default, case-sensitive; `contains`
 *    case-insensitive; `regex` unanchored), true when any element of the chain matches;
 *  - `properties`: property filters as everywhere.
 *
 * A step without conditions matches every event, and so does an action without steps (PostHog's query engine).
 * The coordinator compiles actions into trees; shards only ever see trees.
 */
import type { ActionStep, TextMatching } from '../actions/steps.js';
import { parseFilters, type FilterLeaf, type FilterNode } from './property-filters.js';
import { quoteRegex } from '../patterns/regex.js';

export const AUTOCAPTURE = '$autocapture';

/** An action as an entity resolves it. */
export interface ActionDefinition {
  id: number;
  name: string;
  steps: readonly ActionStep[];
}

/** The project's actions by id (undefined: no such action in the project). */
export type ActionLookup = (id: number) => ActionDefinition | undefined;

const leaf = (type: FilterLeaf['type'], key: string, operator: string, value: unknown): FilterLeaf =>
  ({ type, key, operator, value, groupTypeIndex: null, negation: false });

const TEXT_OPERATORS: Readonly<Record<TextMatching, string>> = { exact: 'exact', contains: 'icontains', regex: 'regex' };

/**
 * SQL LIKE (`%` any run, `_` any one character, `\` escapes the next) as an anchored RE2 pattern, for the filter
 * tree's `regex` leaf (matched in linear time by src/domain/patterns/regex.ts, `.` spanning line breaks).
 */
export function likeRegex(pattern: string): string {
  let out = '^';
  const chars = Array.from(pattern);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) out += quoteRegex(chars[++i]!);
    else if (c === '%') out += '(?s:.*)';
    else if (c === '_') out += '(?s:.)';
    else out += quoteRegex(c);
  }
  return `${out}$`;
}

function urlLeaf(step: ActionStep): FilterLeaf | null {
  if (step.url === null) return null;
  if (step.url_matching === 'exact') return leaf('event', '$current_url', 'exact', step.url);
  if (step.url_matching === 'regex') return leaf('event', '$current_url', 'regex', step.url);
  return leaf('event', '$current_url', 'regex', likeRegex(`%${step.url}%`));
}

/** One step's conditions, AND'd (no condition: every event). */
export function stepFilter(step: ActionStep): FilterNode {
  const children: FilterNode[] = [];
  if (step.event !== null) children.push(leaf('event_name', 'event', 'exact', step.event));
  if (step.event === AUTOCAPTURE) {
    if (step.selector !== null) children.push(leaf('element', 'selector', 'exact', step.selector));
    if (step.tag_name !== null) children.push(leaf('element', 'tag_name', 'exact', step.tag_name));
    if (step.href !== null) children.push(leaf('element', 'href', TEXT_OPERATORS[step.href_matching ?? 'exact'], step.href));
    if (step.text !== null) children.push(leaf('element', 'text', TEXT_OPERATORS[step.text_matching ?? 'exact'], step.text));
  }
  const url = urlLeaf(step);
  if (url !== null) children.push(url);
  const properties = parseFilters(step.properties, 'steps');
  if (properties !== null) children.push(properties);
  return children.length === 1 ? children[0]! : { and: true, children };
}

/** The whole action: any of its steps (no step: every event). */
export function actionFilter(action: Pick<ActionDefinition, 'steps'>): FilterNode {
  if (action.steps.length === 0) return { and: true, children: [] };
  if (action.steps.length === 1) return stepFilter(action.steps[0]!);
  return { and: false, children: action.steps.map(stepFilter) };
}

/** The event names an action's steps name (funnel correlation leaves them out of its candidates). */
export function actionEvents(action: Pick<ActionDefinition, 'steps'>): string[] {
  return [...new Set(action.steps.map((s) => s.event).filter((e): e is string => e !== null))];
}
