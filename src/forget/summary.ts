import type { ForgetReceipt } from "./receipt.ts";

/** The receipt in a few lines for a terminal: counts and places, never a person. */
export function formatForgetSummary(r: ForgetReceipt): string {
  const lines = [`forget: ${r.subjects.length} identifier${r.subjects.length === 1 ? "" : "s"}`];
  for (const w of r.warehouses) {
    const tables = w.tables.map((t) => `${t.table} ${t.removed}`).join(", ");
    const files = w.files?.length ? `${w.files.length} files` : "";
    lines.push(`  warehouse ${w.warehouse}: ${[tables, files].filter(Boolean).join("; ") || "nothing held"}`);
  }
  if ("skipped" in r.redis) lines.push(`  redis: ${r.redis.skipped}`);
  else
    lines.push(
      `  redis ${r.redis.prefix}: ${r.redis.changeOnlyFields} change-only fields, ${r.redis.unverifiedMarks} unverified marks`,
    );
  const rows = r.dataFolder.files.reduce((n, f) => n + f.rows, 0);
  const deleted = r.dataFolder.files.filter((f) => f.action === "deleted").length;
  const rewritten = r.dataFolder.files.filter((f) => f.action === "rewritten").length;
  lines.push(`  data folder: ${rows} rows removed from ${rewritten} files, ${deleted} files deleted`);
  for (const w of r.watchedFolders) {
    const rows = w.files.reduce((n, f) => n + f.rows, 0);
    lines.push(`  watched folder ${w.folder}: ${rows} rows removed from ${w.files.length} files`);
  }
  const left = r.dataFolder.files.filter((f) => f.action === "left");
  for (const f of left)
    lines.push(`  left: ${f.file} is a database no warehouse URL names; delete the person there by hand`);
  if (r.optOut)
    lines.push(`  opted out in the service: ${r.optOut.optedOut} (not known there: ${r.optOut.notFound})`);
  lines.push(`  receipt: ${r.receiptFile}`);
  return lines.join("\n");
}
