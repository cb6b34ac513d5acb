/**
 * A point in the log: the byte offset inside one segment file.
 *
 * Positions handed out by the log are always record boundaries (the offset just after a record). They are totally
 * ordered by (segment, offset). `{ segment: n + 1, offset: 0 }` and the end of segment `n` denote the same logical
 * point; both compare correctly against every record end, which is all replay and release need.
 */
export interface LogPosition {
  readonly segment: number;
  readonly offset: number;
}

/** Negative if a < b, 0 if equal, positive if a > b. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.segment !== b.segment) return a.segment < b.segment ? -1 : 1;
  if (a.offset !== b.offset) return a.offset < b.offset ? -1 : 1;
  return 0;
}

export function formatPosition(p: LogPosition): string {
  return `${p.segment}:${p.offset}`;
}
