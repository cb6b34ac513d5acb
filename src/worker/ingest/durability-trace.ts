/**
 * TEST SEAM (QUILL_DURABILITY_TRACE=1; never set in production): a journal of what one worker thread did to make
 * an acknowledgement true, so an end-to-end test can check the promise "200 only after the request's record was
 * written and fdatasync'ed" on the running server (a kill -9 cannot show a missing fdatasync: the page cache
 * survives it).
 *
 * It wraps the ingest logs' file operations (src/stores/ingest-log/io.ts) and writes one JSON line per step to
 * `<dataDir>/durability-trace/worker-<index>.ndjson`, synchronously, in the order the steps happened:
 *   {"e":"write","file","from","to"}   a write returned (bytes [from, to) of the segment file)
 *   {"e":"sync","file","id"}           an fdatasync of the file was started
 *   {"e":"synced","file","id"}         it completed
 *   {"e":"ack","file","end"}           the capture operation is about to answer 200 for the record ending at `end`
 * Every step of one request happens on the thread that received it (it logs into a shard it owns), so the order
 * within one file is the order that matters. The `ack` is written before the reply leaves the worker, hence before
 * the HTTP answer.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { nodeIo, segmentPath, type LogIo, type LogPosition } from '../../stores/ingest-log/index.js';

export class DurabilityTrace {
  private readonly path: string;
  private nextSync = 1;

  constructor(dataDir: string, worker: number) {
    const dir = join(dataDir, 'durability-trace');
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, `worker-${worker}.ndjson`);
  }

  /** The real file operations, each step recorded. */
  io(): LogIo {
    return {
      open: async (file, mode) => {
        const real = await nodeIo.open(file, mode);
        return {
          ...real,
          writev: async (buffers, position) => {
            const n = await real.writev(buffers, position);
            this.record({ e: 'write', file, from: position, to: position + n });
            return n;
          },
          datasync: async () => {
            const id = this.nextSync++;
            this.record({ e: 'sync', file, id });
            await real.datasync();
            this.record({ e: 'synced', file, id });
          },
        };
      },
      syncDir: (dir) => nodeIo.syncDir(dir),
    };
  }

  /** The capture operation acknowledges the record ending at `end` of the log in `logDir`. */
  ack(logDir: string, end: LogPosition): void {
    this.record({ e: 'ack', file: segmentPath(logDir, end.segment), end: end.offset });
  }

  private record(step: object): void {
    appendFileSync(this.path, `${JSON.stringify(step)}\n`);
  }
}
