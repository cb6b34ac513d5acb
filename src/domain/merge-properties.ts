/**
 * Merging property maps (person and group properties) into a new object that keys can be added to.
 */

const PROTO = '__proto__';

/**
 * `{...a, ...b, ...}` (later layers win), built so that adding keys to the result stays cheap. In V8 (Node 20) a
 * spread copy shares its source's map and every key added to it afterwards builds a new map: 1-3 µs per added
 * key (10 new keys on a 20-key copy: 27 µs, against 2.3 µs for the Object.assign copy below; scratch measurement
 * on this machine). Object.assign would run the `__proto__` setter for an own `__proto__` key instead of copying
 * it, so a layer holding one is spread instead.
 */
export function mergeProperties(...layers: Record<string, unknown>[]): Record<string, unknown> {
  for (const layer of layers) {
    if (Object.prototype.hasOwnProperty.call(layer, PROTO)) return layers.reduce<Record<string, unknown>>((merged, l) => ({ ...merged, ...l }), {});
  }
  return Object.assign({}, ...layers);
}

