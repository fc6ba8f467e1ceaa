import { lines, type Printed, printable } from "../terminal/index.js";

/**
 * Left-aligned columns separated by two spaces, with a header row; for human output (`--json` is for
 * machines). Every cell passes through `printable`: stored text (an uploader name) cannot break a row.
 */
export function textTable(header: readonly string[], rawRows: readonly (readonly string[])[]): Printed {
  const rows = rawRows.map((row) => row.map((cell) => printable(cell)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return lines([line(header), ...rows.map(line)].map((row) => printable(row)));
}

/** `sha256-0123456789ab…` → `0123456789ab`: enough to tell bundles apart in a table. */
export function shortHash(hash: string): string {
  return hash.replace(/^sha256-/, "").slice(0, 12);
}

/** 2048 → "2.0 KB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
