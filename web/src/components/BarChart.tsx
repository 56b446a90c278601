// Bar charts drawn by uPlot (small, canvas): one series, or several stacked (each bar's parts add up to
// its total), vertical or horizontal. The canvas is hidden from screen readers; the same numbers are in
// a table under "Show the numbers".
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useMessages } from '../i18n';

export interface ChartSeries {
  label: string;
  values: number[];
  color: string;
}

export function BarChart(props: {
  title: string;
  categoryLabel: string;
  categories: string[];
  /** Several series are stacked, the first at the bottom. */
  series: ChartSeries[];
  horizontal?: boolean;
}) {
  const m = useMessages();
  const box = useRef<HTMLDivElement>(null);
  const { categories, series, horizontal = false } = props;
  const shape = JSON.stringify([categories, series, horizontal]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const n = categories.length;
    const xs = categories.map((_, i) => i);
    // Stacked: series k is drawn as the sum of series 0..k, tallest first, so each part shows its own colour.
    const sums = series.map((_, k) => xs.map((i) => series.slice(0, k + 1).reduce((t, s) => t + (s.values[i] ?? 0), 0)));
    const order = [...series.keys()].reverse();
    const max = Math.max(1, ...(sums.at(-1) ?? [1]));
    const height = horizontal ? Math.max(140, n * 30 + 50) : 260;
    const categoryAxis: uPlot.Axis = {
      scale: 'x',
      side: horizontal ? 3 : 2,
      // Every category when they fit, else every k-th (30 days on a phone).
      splits: (u) => {
        const room = horizontal ? u.height : u.width;
        const step = Math.max(1, Math.ceil((n * (horizontal ? 22 : 52)) / Math.max(1, room)));
        return xs.filter((i) => i % step === 0);
      },
      values: (_u, splits) => splits.map((i) => categories[i] ?? ''),
      size: horizontal ? 150 : 40,
      grid: { show: false },
      ticks: { show: false },
      gap: 6,
    };
    const valueAxis: uPlot.Axis = {
      scale: 'y',
      side: horizontal ? 2 : 3,
      values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? v.toLocaleString() : '')),
      grid: { stroke: '#e3e6ea', width: 1 },
    };
    const options: uPlot.Options = {
      width: Math.max(240, el.clientWidth),
      height,
      // The series' names and colours only: a live legend shows the hovered bar's values, and empty
      // ones ("Day: Expired: …") when nothing is hovered; the numbers are in the table below.
      legend: { show: series.length > 1, live: false },
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      scales: {
        // Horizontal: the first category at the top.
        x: { time: false, range: [-0.5, n - 0.5], ori: horizontal ? 1 : 0, dir: horizontal ? -1 : 1 },
        y: { range: [0, max * 1.1], ori: horizontal ? 0 : 1 },
      },
      axes: [categoryAxis, valueAxis],
      series: [
        { label: props.categoryLabel, value: (_u, v) => (v === null ? '' : (categories[v] ?? '')) },
        ...order.map((k) => {
          const s = series[k]!;
          return {
            label: s.label,
            fill: s.color,
            stroke: s.color,
            width: 0,
            paths: uPlot.paths.bars!({ size: [0.7, 48] }),
            points: { show: false },
            // The legend shows the part, not the running sum.
            value: (_u: uPlot, _v: number | null, _si: number, idx: number | null) => (idx === null ? '' : String(s.values[idx] ?? 0)),
          };
        }),
      ],
    };
    const plot = new uPlot(options, [xs, ...order.map((k) => sums[k]!)], el);
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(240, el.clientWidth), height }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
    // `shape` stands for categories, series and orientation.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);

  return (
    <figure className="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} className="chart-canvas" aria-hidden="true" />
      <details>
        <summary>{m.common.showData}</summary>
        <div className="table-frame">
          <table>
            <caption className="sr-only">{props.title}</caption>
            <thead>
              <tr>
                <th scope="col">{props.categoryLabel}</th>
                {series.map((s) => (
                  <th scope="col" className="numeric" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {categories.map((c, i) => (
                <tr key={c}>
                  <th scope="row">{c}</th>
                  {series.map((s) => (
                    <td className="numeric" key={s.label}>
                      {(s.values[i] ?? 0).toLocaleString()}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
