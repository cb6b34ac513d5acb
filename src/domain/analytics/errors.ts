/**
 * A request an analysis cannot run: the ops layer answers it as a 400 validation error with `attr` naming the
 * parameter (src/protocol/errors.ts). Domain code stays free of HTTP.
 */
export class AnalyticsInputError extends Error {
  constructor(
    readonly attr: string | null,
    detail: string,
    readonly code = 'invalid_input',
  ) {
    super(detail);
  }
}

export function invalidInput(attr: string | null, detail: string, code?: string): never {
  throw new AnalyticsInputError(attr, detail, code);
}
