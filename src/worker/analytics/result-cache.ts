/**
 * Cached analysis answers (analytics.md §0.8), per worker thread: keyed by project and the normalised question,
 * valid while no new event of the project was applied (the shared project version, src/protocol/shared-state.ts).
 * `refresh=true` skips the lookup and stores the fresh answer.
 */
import type { SharedState } from '../../protocol/shared-state.js';

const MAX_ENTRIES = 256;

interface Entry {
  version: number;
  computedAt: string;
  value: unknown;
}

export class ResultCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly shared: SharedState) {}

  /** The cached answer and when it was computed, or undefined when absent or stale. */
  get(team: number, key: string): { value: unknown; computedAt: string } | undefined {
    const id = `${team}\u0000${key}`;
    const e = this.entries.get(id);
    if (!e) return undefined;
    if (e.version !== this.shared.projectVersion(team)) {
      this.entries.delete(id);
      return undefined;
    }
    this.entries.delete(id);
    this.entries.set(id, e);
    return { value: e.value, computedAt: e.computedAt };
  }

  /** Remembers an answer computed from the data as of `version` (read before computing it). */
  set(team: number, key: string, version: number, value: unknown, computedAt: string): void {
    const id = `${team}\u0000${key}`;
    this.entries.delete(id);
    this.entries.set(id, { version, computedAt, value });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }
}
