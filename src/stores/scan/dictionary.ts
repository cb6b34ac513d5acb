/**
 * The distinct values of one dictionary column, numbered from 1 in order of first sight (0 means "absent").
 * Primitives are their own Map keys (a Map tells 1 from "1" and true from "true"); objects and arrays are keyed by
 * their JSON text in a second map, so no value can collide with another.
 */
export class Dictionary {
  private readonly primitives = new Map<unknown, number>();
  private readonly objects = new Map<string, number>();
  readonly values: unknown[] = [];

  codeOf(value: unknown): number {
    if (value === null || typeof value !== 'object') {
      let code = this.primitives.get(value);
      if (code === undefined) {
        code = this.values.push(value);
        this.primitives.set(value, code);
      }
      return code;
    }
    const text = JSON.stringify(value);
    let code = this.objects.get(text);
    if (code === undefined) {
      code = this.values.push(value);
      this.objects.set(text, code);
    }
    return code;
  }

  get size(): number {
    return this.values.length;
  }

  /**
   * About what the dictionary holds in memory: each value (strings at two bytes a character, as V8 may keep them),
   * its slot in `values` and its map entry. For the memory figures of /metrics; reads every value once.
   */
  approxBytes(): number {
    let bytes = 0;
    for (const v of this.values) bytes += ENTRY_BYTES + (typeof v === 'string' ? 2 * v.length : typeof v === 'object' && v !== null ? 64 : 0);
    return bytes;
  }
}

/** A value's slot, its map entry and a string header, in bytes (V8, 64-bit, pointer compression off). */
const ENTRY_BYTES = 64;
