/**
 * Seeded samples for the experiment-statistics simulations: the same draws on every machine, from the fuzz
 * helpers' mulberry32 source.
 */
import { Random } from './fuzz.js';

export { Random };

/** Standard normal draws by the Box–Muller transform (both values of each pair are used). */
export function gaussianSource(random: Random): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const value = spare;
      spare = null;
      return value;
    }
    let u = 0;
    while (u === 0) u = random.next();
    const radius = Math.sqrt(-2 * Math.log(u));
    const angle = 2 * Math.PI * random.next();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
}

/** Running sufficient statistics of a stream of values: n, Σy, Σy². */
export class Sums {
  n = 0;
  sum = 0;
  sumSquares = 0;

  add(y: number): void {
    this.n++;
    this.sum += y;
    this.sumSquares += y * y;
  }
}
