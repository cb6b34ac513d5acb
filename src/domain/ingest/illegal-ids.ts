/**
 * §2.4 distinct ids that must never take part in a merge: placeholders that buggy integrations send for many
 * different users, which would otherwise glue unrelated people into one person.
 * [2023+] lists, including the single- and double-quoted forms seen in the wild (`"null"`, `'guest'`).
 * As in PostHog, only the emptiness test trims; the list lookups use the id exactly as sent.
 */

const CASE_INSENSITIVE = [
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'not_authenticated',
  'email',
  'undefined',
  'true',
  'false',
];

const CASE_SENSITIVE = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined'];

function withQuoted(ids: string[]): Set<string> {
  const out = new Set<string>();
  for (const id of ids) {
    out.add(id);
    out.add(`'${id}'`);
    out.add(`"${id}"`);
  }
  return out;
}

const CASE_INSENSITIVE_SET = withQuoted(CASE_INSENSITIVE);
const CASE_SENSITIVE_SET = withQuoted(CASE_SENSITIVE);

/** Longest listed id incl. quotes; longer ids skip the lookups (the common case for real ids). */
const MAX_LISTED = Math.max(...[...CASE_INSENSITIVE_SET, ...CASE_SENSITIVE_SET].map((s) => s.length));

export function isIllegalDistinctId(id: string): boolean {
  if (id.trim().length === 0) return true;
  if (id.length > MAX_LISTED) return false;
  return CASE_SENSITIVE_SET.has(id) || CASE_INSENSITIVE_SET.has(id.toLowerCase());
}
