/**
 * The known name closest to a typed one, to say "did you mean …" for a property name that no event carries.
 * Shared by the console (bundled) and anything server-side that wants the same hint; pure.
 */

/** Edit distance (insertions, deletions, substitutions, and swaps of neighbours), stopping early past `max`. */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prevPrev[j - 2]! + 1);
      row.push(d);
      if (d < best) best = d;
    }
    if (best > max) return max + 1;
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The closest of `known` to `name`, if it is close enough to be a typo: within a third of the name's length
 * (at least 1, at most 3 edits), case differences counting as nothing. Ties go to the earlier name of `known`.
 */
export function closestName(name: string, known: Iterable<string>): string | null {
  const wanted = name.toLowerCase();
  const max = Math.min(3, Math.max(1, Math.floor(wanted.length / 3)));
  let best: string | null = null;
  let bestDistance = max + 1;
  for (const candidate of known) {
    const d = editDistance(wanted, candidate.toLowerCase(), bestDistance - 1 < 0 ? 0 : bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
      if (d === 0) break;
    }
  }
  return bestDistance <= max ? best : null;
}
