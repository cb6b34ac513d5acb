/**
 * Faults an event can carry into the apply, for the tests of its bounds (QUILL_FAULT_INJECTION=1 only; otherwise
 * the property is an ordinary one): `$quill_fault: "spin:<ms>"` holds the apply's thread in synchronous work for
 * that long while the event is processed (the apply budget's test), `"kill"` kills the whole process with SIGKILL
 * while it is applied (the crash marker's test: src/worker/ingest/apply-marker.ts), `"throw"` makes its processing
 * throw (a poison event: set aside, nothing else lost).
 *
 * The kill comes 200 ms into the apply: the worker posts the acknowledgement before it applies, but the front
 * thread still has to write it to the socket, and a kill in the same instant would race it (the client then sees
 * a lost connection, the ordinary at-least-once case). The pause lets the test check what it is about: the
 * acknowledgement does not wait for the apply.
 */
import type { NormalizedEvent } from '../../domain/ingest/index.js';

const KILL_AFTER_MS = 200;

export function applyFault(event: NormalizedEvent): void {
  const fault = event.properties['$quill_fault'];
  if (typeof fault !== 'string') return;
  if (fault === 'kill') {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, KILL_AFTER_MS);
    process.kill(process.pid, 'SIGKILL');
  }
  if (fault === 'throw') throw new Error('injected apply failure');
  const spin = /^spin:(\d+)$/.exec(fault);
  if (spin) {
    const until = performance.now() + Math.min(Number(spin[1]), 60_000);
    while (performance.now() < until) {
      // busy, as a runaway computation would be
    }
  }
}
