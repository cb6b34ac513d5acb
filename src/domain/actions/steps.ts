/**
 * An action's steps as the actions API takes and answers them (PostHog's ActionStepJSON): each step is one
 * alternative of the action, its conditions AND'd. Request bodies are validated and normalised here — every field
 * present, blanks as null, `url_matching` defaulting to `contains` — and every pattern is compiled once, so an
 * action that is stored always compiles into a filter (src/domain/analytics/action-filter.ts).
 */
import { invalidInput } from '../analytics/errors.js';
import { MAX_SELECTOR_PARTS, parseSelector } from '../analytics/element-match.js';
import { parseFilters } from '../analytics/property-filters.js';
import { regexProblem } from '../patterns/regex.js';
import { pyType } from '../py-type.js';

export type UrlMatching = 'contains' | 'regex' | 'exact';
export type TextMatching = 'exact' | 'contains' | 'regex';

export interface ActionStep {
  event: string | null;
  /** Property filters in any accepted form, as sent (`[]` when none). */
  properties: unknown;
  selector: string | null;
  tag_name: string | null;
  text: string | null;
  text_matching: TextMatching | null;
  href: string | null;
  href_matching: TextMatching | null;
  url: string | null;
  url_matching: UrlMatching | null;
}

const URL_MATCHING: readonly string[] = ['contains', 'regex', 'exact'];
const TEXT_MATCHING: readonly string[] = ['exact', 'contains', 'regex'];
const STRING_FIELDS = ['event', 'selector', 'tag_name', 'text', 'href', 'url'] as const;
const MAX_STEPS = 100;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function textField(step: Record<string, unknown>, field: string, attr: string): string | null {
  const v = step[field];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') return invalidInput(attr, 'Not a valid string.');
  return v;
}

function choice<T extends string>(step: Record<string, unknown>, field: string, choices: readonly string[], attr: string): T | null {
  const v = step[field];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || !choices.includes(v)) invalidInput(attr, `"${String(v)}" is not a valid choice.`, 'invalid_choice');
  return v as T;
}

function checkRegex(pattern: string | null, attr: string): void {
  if (pattern === null) return;
  const problem = regexProblem(pattern, 'clickhouse');
  if (problem !== null) invalidInput(attr, problem);
}

/** One step of a request body, validated and normalised; `attr` names it (`steps__0__url`, PostHog's field path). */
function stepOf(raw: unknown, at: number): ActionStep {
  const attr = (field: string) => `steps__${at}__${field}`;
  if (!isObject(raw)) return invalidInput(`steps__${at}`, `Invalid data. Expected a dictionary, but got ${pyType(raw)}.`);
  const texts = Object.fromEntries(STRING_FIELDS.map((f) => [f, textField(raw, f, attr(f))])) as Record<(typeof STRING_FIELDS)[number], string | null>;
  const step: ActionStep = {
    ...texts,
    properties: raw.properties ?? [],
    text_matching: choice<TextMatching>(raw, 'text_matching', TEXT_MATCHING, attr('text_matching')),
    href_matching: choice<TextMatching>(raw, 'href_matching', TEXT_MATCHING, attr('href_matching')),
    // PostHog stores `contains` when the field is left out.
    url_matching: choice<UrlMatching>(raw, 'url_matching', URL_MATCHING, attr('url_matching')) ?? 'contains',
  };
  parseFilters(step.properties, attr('properties'));
  if (step.url_matching === 'regex') checkRegex(step.url, attr('url'));
  if (step.text_matching === 'regex') checkRegex(step.text, attr('text'));
  if (step.href_matching === 'regex') checkRegex(step.href, attr('href'));
  if (step.selector !== null && parseSelector(step.selector) === null) {
    invalidInput(attr('selector'), `Unsupported selector "${step.selector}": use tags, .classes, #ids, [attributes], :nth-child(n), :nth-of-type(n), ">" and descendant spaces, in at most ${MAX_SELECTOR_PARTS} parts.`);
  }
  return step;
}

/** The `steps` of a request body: a list of step objects. */
export function stepsOf(raw: unknown): ActionStep[] {
  if (raw === null) return [];
  if (!Array.isArray(raw)) return invalidInput('steps', `Expected a list of items but got type "${pyType(raw)}".`, 'not_a_list');
  if (raw.length > MAX_STEPS) invalidInput('steps', `An action has at most ${MAX_STEPS} steps.`);
  return raw.map((s, i) => stepOf(s, i));
}
