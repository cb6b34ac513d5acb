/**
 * The descriptive fields event and property definitions share (`description`, `tags`), read from a PATCH body with
 * DRF's codes and messages for each kind of mistake, as PostHog answers them.
 */
import { pyType } from '../../domain/py-type.js';
import { Errors } from '../../protocol/errors.js';

export function descriptiveChanges(body: Record<string, unknown>): { description?: string | null; tags?: string[] } {
  const out: { description?: string | null; tags?: string[] } = {};
  if ('description' in body) {
    const v = body.description;
    if (v !== null && typeof v !== 'string') throw Errors.validation('description', 'invalid_input', 'Not a valid string.');
    out.description = v;
  }
  if ('tags' in body) {
    const v = body.tags;
    if (!Array.isArray(v)) throw Errors.validation('tags', 'not_a_list', `Expected a list of items but got type "${pyType(v)}".`);
    // Trimmed; blanks and repeats dropped.
    const tags: string[] = [];
    for (const tag of v) {
      if (typeof tag !== 'string') throw Errors.validation('tags', 'invalid_input', 'Not a valid string.');
      const t = tag.trim();
      if (t !== '' && !tags.includes(t)) tags.push(t);
    }
    out.tags = tags;
  }
  return out;
}
