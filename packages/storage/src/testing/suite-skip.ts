/**
 * How a conformance suite is told which of its tests a backend skips, and
 * why: every deviation is written down next to the backend that has it.
 *
 * @module
 */

/** Tests a backend skips, with the reason printed by the runner. */
export interface SuiteSkip {
  readonly reason: string;
  readonly tests: readonly string[];
}

/** The skip reason for `test`, if any. */
export function skipReason(
  skips: readonly SuiteSkip[] | undefined,
  test: string,
): string | undefined {
  return skips?.find((s) => s.tests.includes(test))?.reason;
}
