/** Asserts |actual − expected| ≤ tolerance through any tap test, naming both values in the message. */
export function close(t: { ok(condition: boolean, message: string): unknown }, actual: number, expected: number, tolerance: number, what: string): void {
  t.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected} (±${tolerance})`);
}
