/**
 * The memory budget's decision (QUILL_MEMORY_MB), pure: whether the process is over its budget, from its anonymous
 * resident memory. Anonymous memory (heaps, buffers, caches) is what the process grows by itself; the pages of the
 * LMDB files it maps are file-backed, the kernel drops them under pressure, so they do not count.
 *
 * Hysteresis: over once the budget is crossed, under again only below RESUME_FRACTION of it while events wait to
 * be applied. Without it, a process sitting at its budget would flap between refusing and accepting on every
 * sample. With nothing left to apply, being within the budget is enough: refusing then waits for nothing (measured:
 * a 600 MB budget, 555 MB at rest after the drain, would have refused forever below a 540 MB line).
 */
export const RESUME_FRACTION = 0.9;

/** Whether the process is over its budget now, given whether it was at the previous sample and whether events wait. */
export function overBudget(wasOver: boolean, anonymousBytes: number, budgetBytes: number, eventsWaiting = true): boolean {
  if (budgetBytes <= 0) return false;
  if (!wasOver) return anonymousBytes > budgetBytes;
  return eventsWaiting ? anonymousBytes >= budgetBytes * RESUME_FRACTION : anonymousBytes > budgetBytes;
}

/** Resident memory from the text of `/proc/self/status` (kB fields), in bytes; null where a field is absent. */
export function residentMemory(status: string): { resident: number | null; anonymous: number | null } {
  return { resident: kbField(status, 'VmRSS'), anonymous: kbField(status, 'RssAnon') };
}

function kbField(status: string, name: string): number | null {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
  return m ? Number(m[1]) * 1024 : null;
}

/** Seconds a refused client should wait: about one apply of what a worker holds, within the 30 s SDKs honour. */
export const MEMORY_RETRY_AFTER_S = 5;
