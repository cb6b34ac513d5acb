/**
 * The project's path-cleaning rules as the settings form edits them: each a regular expression and the alias that
 * replaces what it matches in a path (PostHog's `path_cleaning_filters`). The server checks the patterns again (as
 * RE2); the form names an empty or unreadable pattern beside its row before anything is sent.
 */
export interface PathRule {
  regex: string;
  alias: string;
}

/** Per row index, what is wrong with it; empty when every row can be saved. Rows left wholly empty are ignored. */
export function pathRuleProblems(rules: readonly PathRule[]): Map<number, string> {
  const problems = new Map<number, string>();
  rules.forEach((r, i) => {
    if (r.regex.trim() === '' && r.alias.trim() === '') return;
    if (r.regex.trim() === '') return problems.set(i, 'A rule needs a pattern.');
    try {
      new RegExp(r.regex);
    } catch (error) {
      // The engine's message repeats the pattern ("Invalid regular expression: /…/: Unterminated group"): the reason.
      const reason = /: ([^:]+)$/.exec((error as Error).message)?.[1] ?? 'it does not parse';
      problems.set(i, `Not a regular expression: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}.`);
    }
  });
  return problems;
}

/** The rules to store: wholly empty rows dropped. */
export function rulesToSave(rules: readonly PathRule[]): PathRule[] {
  return rules.filter((r) => r.regex.trim() !== '' || r.alias.trim() !== '');
}

/** A path as the rules clean it, in order, each replacing every match: what paths would show for `path`. */
export function cleanPath(path: string, rules: readonly PathRule[]): string {
  let out = path;
  for (const r of rulesToSave(rules)) {
    try {
      out = out.replace(new RegExp(r.regex, 'g'), r.alias);
    } catch {
      // An unreadable pattern is named beside its row; it cleans nothing here.
    }
  }
  return out;
}
