/**
 * How deeply a parsed JSON value nests, measured without recursion.
 *
 * V8's JSON.parse is iterative and accepts any depth, but much of what happens to a value afterwards recurses:
 * msgpackr's pack (the front → worker message, LMDB values) overflows the stack at about 1,400 levels on the main
 * thread, JSON.stringify at about 4,100, and our own filter and flag code recurses too. One request must not be
 * able to throw there, so every JSON value Quill accepts from a client is bounded first, by this iterative walk.
 */

/**
 * The deepest nesting accepted in a client's JSON (the outermost object or array is level 1). PostHog's Rust
 * capture parses bodies with serde_json, whose default recursion limit is 128, so no PostHog client sends more;
 * 128 also leaves a tenfold margin below the shallowest recursive consumer (msgpackr on the main thread).
 */
export const MAX_JSON_DEPTH = 128;

/**
 * True when `value` nests deeper than `limit` levels. Stops at the first container past the limit, so an
 * adversarial value costs no more than its shallow part. Scalars have depth 0.
 */
export function nestsDeeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const pending: object[] = [value];
  const depths: number[] = [1];
  while (pending.length > 0) {
    const container = pending.pop()!;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const child: unknown = container[i];
        if (child !== null && typeof child === 'object') {
          pending.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in container) {
        const child: unknown = (container as Record<string, unknown>)[key];
        if (child !== null && typeof child === 'object') {
          pending.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}
