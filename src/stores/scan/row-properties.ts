/**
 * A row's properties as one object, read from a block: every property column of a kind with a value at the row,
 * and the row's overflow object (src/stores/scan/overflow.ts). The one place whole-row readers (the events API,
 * HogQL's `properties`, a person's timeline, the export's backfill) get properties from, so none forgets the
 * overflow.
 */
import type { BlockView, DictColumn } from './column-block.js';
import { EVENT_PROP, OVERFLOW, overflowObjectAt, setOwn } from './overflow.js';

/**
 * Reads rows' properties of one kind (`prefix`: EVENT_PROP or PERSON_PROP); the columns are looked up once, as the
 * block's own columns: the overflow object of each row is merged here, so no column is derived from it.
 */
export function propertiesReader(block: BlockView, prefix: string): (row: number) => Record<string, unknown> {
  const columns: [string, DictColumn][] = [];
  for (const name of block.names(prefix)) {
    const col = block.ownDict(name);
    if (col) columns.push([name.slice(prefix.length), col]);
  }
  const overflow = block.dict(prefix === EVENT_PROP ? OVERFLOW.event : OVERFLOW.person);
  return (row) => {
    const out: Record<string, unknown> = {};
    for (const [key, col] of columns) {
      const code = col.codes[row]!;
      // A data property: a key named "__proto__" must not set the object's prototype.
      if (code !== 0) setOwn(out, key, col.values[code - 1]);
    }
    const more = overflowObjectAt(overflow, row);
    if (more) for (const key in more) setOwn(out, key, more[key]);
    return out;
  };
}
