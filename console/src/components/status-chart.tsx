// Runs per status over time as stacked bars (SVG: sizes are attributes, which the strict CSP allows), with a
// legend and, for screen readers and exact values, each bar's counts in its title.
import type { Bucket } from '../api/dashboard';
import { RUN_STATUSES } from '../api/runs';

const WIDTH = 720;
const HEIGHT = 160;

export function StatusChart({ buckets, bucketMs }: { buckets: Bucket[]; bucketMs: number }) {
  const totals = buckets.map((b) => Object.values(b.counts).reduce((a, n) => a + (n ?? 0), 0));
  const max = Math.max(1, ...totals);
  const barWidth = WIDTH / Math.max(buckets.length, 1);
  const label = (t: number) =>
    bucketMs >= 86_400_000
      ? new Date(t).toLocaleDateString()
      : new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT + 18}`}
        role="img"
        aria-label={`Runs per status: ${totals.reduce((a, n) => a + n, 0)} runs in ${buckets.length} bars`}
      >
        {buckets.map((b, i) => {
          let y = HEIGHT;
          return (
            <g key={b.start}>
              <title>
                {`${label(b.start)}: ${
                  RUN_STATUSES.filter((s) => b.counts[s])
                    .map((s) => `${b.counts[s]} ${s}`)
                    .join(', ') || 'no run'
                }`}
              </title>
              <rect className="chart-slot" x={i * barWidth} y={0} width={barWidth} height={HEIGHT} />
              {RUN_STATUSES.map((s) => {
                const n = b.counts[s];
                if (!n) return null;
                const h = (n / max) * (HEIGHT - 4);
                y -= h;
                return (
                  <rect
                    key={s}
                    className={`bar bar-${s.toLowerCase()}`}
                    data-status={s}
                    x={i * barWidth + 1}
                    y={y}
                    width={Math.max(barWidth - 2, 1)}
                    height={h}
                  />
                );
              })}
              {i % Math.ceil(buckets.length / 8) === 0 && (
                <text x={i * barWidth} y={HEIGHT + 14} className="chart-label">
                  {label(b.start)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="legend">
        {RUN_STATUSES.map((s) => (
          <span key={s}>
            <svg width="10" height="10" aria-hidden="true">
              <rect className={`bar bar-${s.toLowerCase()}`} width="10" height="10" />
            </svg>{' '}
            {s}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
