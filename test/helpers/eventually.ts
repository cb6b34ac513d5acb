/**
 * Waiting for something another process does on its own schedule (a browser flushing its queue, an SDK's poller).
 * Tests poll the observable outcome with a generous deadline instead of sleeping a guessed time; the deadline only
 * bounds a failure, it is never the thing asserted: 60 s by default, since a suite run beside a CPU hog took 15 s and
 * more for what takes a second on a quiet machine (the seed of hostile-queries' data, applied).
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 60_000, intervalMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms${cause}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
