/**
 * A horizontal bar of used / total with its label and figures.
 *
 * @module
 */

/** One usage bar. */
export function UsageBar({
  label,
  used,
  total,
  format = (n) => String(n),
}: {
  label: string;
  used: number;
  total: number;
  format?: (n: number) => string;
}) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  const level = pct >= 90 ? 'high' : pct >= 70 ? 'mid' : 'low';
  return (
    <div className="usage">
      <div className="usage-label">
        <span>{label}</span>
        <span>
          {format(used)} / {format(total)}
        </span>
      </div>
      <div className="usage-track" role="meter" aria-valuenow={Math.round(pct)} aria-label={label}>
        <div className={`usage-fill ${level}`} style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}
