/**
 * A sandbox or node state as a coloured badge.
 *
 * @module
 */

/** One badge. */
export function StateBadge({ state }: { state: string }) {
  return (
    <span className={`badge state-${state}`} data-testid="state">
      {state}
    </span>
  );
}
