/**
 * A small SVG line chart of time series over the last hour: one polyline
 * per series (broken where a value is null: no operation in that
 * interval), a y axis scaled to the data, and a legend with the latest
 * values. No chart library: the bundle stays small and the CSP strict.
 *
 * @module
 */

/** One line. */
export interface ChartSeries {
  readonly name: string;
  readonly color: string;
  readonly values: readonly (number | null)[];
}

const W = 560;
const H = 150;
const PAD = { left: 44, right: 8, top: 8, bottom: 18 };

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  const m = v / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/** Polyline point lists, split at nulls. */
function segments(
  values: readonly (number | null)[],
  x: (i: number) => number,
  y: (v: number) => number,
) {
  const out: string[][] = [];
  let current: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (current.length > 0) out.push(current);
      current = [];
    } else {
      current.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    }
  });
  if (current.length > 0) out.push(current);
  return out;
}

/** The horizontal grid with its labels, and the time axis. */
function Axes({
  max,
  y,
  format,
}: {
  max: number;
  y: (v: number) => number;
  format: (v: number | null) => string;
}) {
  return (
    <>
      {[0, 0.5, 1].map((f) => (
        <g key={f}>
          <line x1={PAD.left} x2={W - PAD.right} y1={y(max * f)} y2={y(max * f)} className="grid" />
          <text x={PAD.left - 4} y={y(max * f) + 4} className="axis" textAnchor="end">
            {format(max * f)}
          </text>
        </g>
      ))}
      <text x={PAD.left} y={H - 4} className="axis">
        −60 min
      </text>
      <text x={W - PAD.right} y={H - 4} className="axis" textAnchor="end">
        now
      </text>
    </>
  );
}

/** The chart. */
export function LineChart({
  title,
  times,
  series,
  format,
  testId,
}: {
  title: string;
  times: readonly number[];
  series: readonly ChartSeries[];
  format: (v: number | null) => string;
  testId?: string;
}) {
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const max = niceMax(Math.max(0, ...all));
  const end = times.at(-1) ?? Date.now();
  const start = end - 3600_000;
  const x = (i: number): number =>
    PAD.left + (((times[i] ?? end) - start) / (end - start)) * (W - PAD.left - PAD.right);
  const y = (v: number): number => PAD.top + (1 - v / max) * (H - PAD.top - PAD.bottom);
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption>
        <span>{title}</span>
        <span className="legend">
          {series.map((s) => (
            <span key={s.name} style={{ color: s.color }}>
              {s.name} {format(s.values.at(-1) ?? null)}
            </span>
          ))}
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title}>
        <Axes max={max} y={y} format={format} />
        {series.map((s) =>
          segments(s.values, x, y).map((pts, i) =>
            pts.length === 1 ? (
              <circle
                key={`${s.name}${i}`}
                cx={pts[0]?.split(',')[0]}
                cy={pts[0]?.split(',')[1]}
                r={2}
                fill={s.color}
              />
            ) : (
              <polyline
                key={`${s.name}${i}`}
                points={pts.join(' ')}
                fill="none"
                stroke={s.color}
                strokeWidth={1.5}
              />
            ),
          ),
        )}
      </svg>
      {times.length === 0 && (
        <div className="chart-empty">collecting… (a point every few seconds)</div>
      )}
    </figure>
  );
}
