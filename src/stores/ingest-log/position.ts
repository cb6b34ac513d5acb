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

const SEGMENT_FACTOR = 0x1_0000_0000;

/**
 * A position as one number, `segment * 2^32 + offset` (exact: segments stay far below 2^21), for shared memory
 * and record references between threads.
 */
export function positionNumber(p: LogPosition): number {
  return p.segment * SEGMENT_FACTOR + p.offset;
}

/** The inverse of positionNumber. */
export function positionOf(n: number): LogPosition {
  return { segment: Math.floor(n / SEGMENT_FACTOR), offset: n % SEGMENT_FACTOR };
}

