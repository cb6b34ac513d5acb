/**
 * Tests that need something from the machine (a Chromium, root to mount a tmpfs) fail when it is missing: a
 * skipped test reads as green in a summary, and a suite that quietly stops testing the browser or a full disk is
 * how a broken promise ships. An operator who knowingly runs without it sets the opt-out variable named here;
 * `.ci/run` unsets them, so CI always runs everything.
 */

/** Opt-out variables, one per requirement. */
export const OPT_OUT = {
  browser: 'QUILL_TEST_SKIP_BROWSER',
  tmpfs: 'QUILL_TEST_SKIP_TMPFS',
} as const;

export type Requirement = keyof typeof OPT_OUT;

/** True when the opt-out variable of `requirement` is set to 1. */
export function optedOut(requirement: Requirement, env: NodeJS.ProcessEnv = process.env): boolean {
  return env[OPT_OUT[requirement]] === '1';
}

interface Tap {
  skip(name: string, fn?: () => void): unknown;
  fail(message: string): unknown;
}

/**
 * Reports a missing requirement: a failure, or a loudly announced skip when its opt-out variable is set.
 * Returns nothing to run either way; callers run their tests only when nothing was missing.
 */
export function missing(t: Tap, requirement: Requirement, what: string, why: string): void {
  const line = '!'.repeat(100);
  if (optedOut(requirement)) {
    console.error(`\n${line}\n!!! ${what} SKIPPED (${OPT_OUT[requirement]}=1): ${why}\n${line}\n`);
    t.skip(`${what} not run (${OPT_OUT[requirement]}=1): ${why}`, () => {});
    return;
  }
  t.fail(`${what} cannot run: ${why}. Fix the machine, or set ${OPT_OUT[requirement]}=1 to skip it knowingly.`);
}
