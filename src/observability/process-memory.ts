/** The process's resident memory as Linux reports it (any thread may read it: memory is per process). */
import { readFileSync } from 'node:fs';
import { residentMemory } from '../domain/memory-budget.js';

const STATUS_FILE = '/proc/self/status';

/** Resident and anonymous resident bytes; null fields where this system does not say (not Linux). */
export function processMemory(): { resident: number | null; anonymous: number | null } {
  try {
    return residentMemory(readFileSync(STATUS_FILE, 'utf8'));
  } catch {
    return { resident: null, anonymous: null };
  }
}
