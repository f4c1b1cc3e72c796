// A horizontal bar chart of the benchmark ratios, as a self-contained SVG.
export function renderChart(rows: { metric: string; mode?: string; ratio?: number }[]): string {
  const barH = 18;
  const gap = 6;
  const labelW = 470;
  const plotW = 360;
  const max = Math.max(1, ...rows.map((r) => r.ratio ?? 0));
  const h = 40 + rows.length * (barH + gap);
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const bars = rows.map((r, i) => {
    const y = 30 + i * (barH + gap);
    const w = Math.max(1, ((r.ratio ?? 0) / max) * plotW);
    const label = `${r.mode ? `[${r.mode}] ` : ""}${r.metric}`;
    return `<text x="${labelW - 8}" y="${y + 13}" text-anchor="end">${esc(label)}</text><rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${(r.ratio ?? 0) <= 1 ? "#2b8a3e" : "#1c7ed6"}"/><text x="${labelW + w + 6}" y="${y + 13}">${(r.ratio ?? 0).toFixed(2)}×</text>`;
  });
  const one = labelW + plotW / max;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${labelW + plotW + 80}" height="${h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="18" font-weight="bold">Airlock benchmark: each figure ÷ its same-run baseline</text>
<line x1="${one}" y1="24" x2="${one}" y2="${h - 6}" stroke="#aaa" stroke-dasharray="3,3"/>
${bars.join("\n")}
</svg>
`;
}
