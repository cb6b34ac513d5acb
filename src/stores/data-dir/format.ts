/**
 * The data directory's format version, recorded in the metadata environment (`settings` → `format`), so that a
 * newer Quill knows what it opens and an older one refuses what it cannot read.
 *
 *   1  Data directories written before the version was recorded: no `format` entry, projects without
 *      `event_retention_days`.
 *   2  The version is recorded; every project has `event_retention_days` (null: events are kept).
 *
 * The analytics scan layout has a version of its own (src/stores/scan/scan-store.ts): it is derived from the
 * stored rows and rebuilt when it changes, so it needs no upgrade step here.
 */
export const DATA_FORMAT_VERSION = 2;

export type FormatCheck =
  /** A new data directory: record the current version. */
  | { kind: 'new' }
  | { kind: 'current' }
  /** Written by an older Quill: back it up, then migrate from `from`. */
  | { kind: 'upgrade'; from: number }
  /** Written by a newer Quill: refuse to start. */
  | { kind: 'newer'; found: number };

/** What to do with a data directory whose recorded version is `stored` (undefined: none recorded). */
export function checkFormat(stored: number | undefined, initialised: boolean): FormatCheck {
  if (!initialised) return { kind: 'new' };
  const found = stored ?? 1;
  if (found === DATA_FORMAT_VERSION) return { kind: 'current' };
  if (found > DATA_FORMAT_VERSION) return { kind: 'newer', found };
  return { kind: 'upgrade', from: found };
}

export function newerFormatMessage(dataDir: string, found: number): string {
  return `data directory ${dataDir} has format version ${found}, written by a newer Quill; this Quill reads format ` +
    `version ${DATA_FORMAT_VERSION} at most and has not changed it. Run the newer Quill, or start this one on a ` +
    `backup made before the upgrade (the newer Quill keeps one in ${dataDir}/upgrade-backups/).`;
}
