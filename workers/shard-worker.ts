// A shard worker thread's ES module entry (Piscina loads workers/shard-worker.cts, which import()s this). Kept thin
// on purpose: all logic lives in src/worker/ and is reached over HTTP in tests (code that only runs in worker
// threads is invisible to tap's coverage).
import { setFlagsFromString } from 'node:v8';
import { workerData } from 'node:worker_threads';
import { createWorkerEntry } from '../src/worker/entry.js';

// Flag filters may hold user-supplied regexes. V8's linear-time fallback engine takes over from patterns that
// backtrack excessively (e.g. `(a+)+$`), so a hostile pattern cannot hang a worker. Must run before any regex
// is compiled; it cannot be given through NODE_OPTIONS.
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

export default createWorkerEntry(workerData);
