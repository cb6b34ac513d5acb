/** append() after close() was called. The record was not written. */
export class IngestLogClosedError extends Error {
  readonly code = 'INGEST_LOG_CLOSED';
  constructor() {
    super('ingest log is closed');
    this.name = 'IngestLogClosedError';
  }
}

/**
 * A record inside the durable part of the log failed its length/CRC check during replay.
 *
 * open() only repairs the tail of the last segment (the only place a crash can leave a torn write). Anything bad
 * elsewhere is damage to acknowledged data, so replay refuses to skip over it silently.
 */
export class IngestLogCorruptError extends Error {
  readonly code = 'INGEST_LOG_CORRUPT';
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly reason: string,
  ) {
    super(`ingest log corrupt: ${file} at offset ${offset}: ${reason}`);
    this.name = 'IngestLogCorruptError';
  }
}
