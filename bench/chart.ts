// A horizontal bar chart of the benchmark ratios, as a self-contained SVG. The scale is
// logarithmic (ratios span 0.001× for flock to 60× for expiry lags); the 1× line is marked.
export function renderChart(rows: { metric: string; mode?: string; ratio?: number }[]): string {
  const barH = 18;
  const gap = 6;
  const labelW = 470;
  const plotW = 380;
  const top = 40;
  const ratios = rows.map((r) => Math.max(r.ratio ?? 0, 1e-4));
  const lo = Math.floor(Math.log10(Math.min(0.1, ...ratios)));
  const hi = Math.ceil(Math.log10(Math.max(10, ...ratios)));
  const x = (r: number) => labelW + ((Math.log10(Math.max(r, 10 ** lo)) - lo) / (hi - lo)) * plotW;
  const h = top + rows.length * (barH + gap) + 10;
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const grid: string[] = [];
  for (let e = lo; e <= hi; e++) {
    const gx = x(10 ** e).toFixed(1);
    grid.push(
      `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${h - 6}" stroke="${e === 0 ? "#555" : "#ddd"}"${e === 0 ? ' stroke-dasharray="4,3"' : ""}/>` +
        `<text x="${gx}" y="${top - 10}" text-anchor="middle" fill="#555">${10 ** e >= 1 ? 10 ** e : (10 ** e).toFixed(-e)}×</text>`,
    );
  }
  const bars = rows.map((r, i) => {
    const y = top + i * (barH + gap);
    const ratio = ratios[i]!;
    const x0 = x(Math.min(1, ratio));
    const w = Math.max(1, Math.abs(x(ratio) - x(1)));
    const label = `${r.mode ? `[${r.mode}] ` : ""}${r.metric}`;
    return (
      `<text x="${labelW - 8}" y="${y + 13}" text-anchor="end">${esc(label)}</text>` +
      `<rect x="${x0.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${ratio <= 1 ? "#2b8a3e" : "#1c7ed6"}"/>` +
      `<text x="${(Math.max(x(ratio), x(1)) + 6).toFixed(1)}" y="${y + 13}">${(r.ratio ?? 0).toFixed(ratio < 0.01 ? 4 : 2)}×</text>`
    );
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${labelW + plotW + 90}" height="${h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="16" font-weight="bold">Airlock benchmark: each figure ÷ its same-run baseline (log scale; green: below 1×)</text>
${grid.join("\n")}
${bars.join("\n")}
</svg>
`;
}
