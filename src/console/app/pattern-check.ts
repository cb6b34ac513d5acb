/**
 * The console's stand-in for the server's pattern module (src/domain/patterns/regex.ts), bundled in its place
 * (src/console/build.ts): the browser does not carry RE2. The flag form validates filters but never evaluates a
 * flag, so no pattern is compiled here and regex checking is left to the API, which answers a pattern RE2
 * refuses with a 400 naming the reason.
 */
export class PatternWorkError extends Error {}

export function compileRegex(_pattern: string, _dialect: 'clickhouse' | 'rust'): null {
  return null;
}

export function regexProblem(_pattern: string, _dialect: 'clickhouse' | 'rust'): string | null {
  return null;
}
