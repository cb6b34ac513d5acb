/**
 * Faults an event can carry into the apply, for the tests of its bounds (QUILL_FAULT_INJECTION=1 only; otherwise
 * the property is an ordinary one): `$quill_fault: "spin:<ms>"` holds the apply's thread in synchronous work for
 * that long while the event is processed (the apply budget's test), `"kill"` kills the whole process with SIGKILL
 * while it is applied (the crash marker's test: src/worker/ingest/apply-marker.ts), `"throw"` makes its processing
 * throw (a poison event: set aside, nothing else lost).
 */
import type { NormalizedEvent } from '../../domain/ingest/index.js';

export function applyFault(event: NormalizedEvent): void {
  const fault = event.properties['$quill_fault'];
  if (typeof fault !== 'string') return;
  if (fault === 'kill') process.kill(process.pid, 'SIGKILL');
  if (fault === 'throw') throw new Error('injected apply failure');
  const spin = /^spin:(\d+)$/.exec(fault);
  if (spin) {
    const until = performance.now() + Math.min(Number(spin[1]), 60_000);
    while (performance.now() < until) {
      // busy, as a runaway computation would be
    }
  }
}
