import type { ColumnSchema, Row } from "../types.ts";
import { jsonText, toDate, toEpochDays, toStringArray } from "../values.ts";

const ISO_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:?\d\d)$/;

/** Escapes for COPY's text format: backslash, tab, newline and carriage return. */
function copyEscape(s: string): string {
  if (!/[\\\t\n\r]/.test(s)) return s;
  return s.replace(/[\\\t\n\r]/g, (c) =>
    c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r",
  );
}

function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((i) => `"${i.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(",")}}`;
}

function isoDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * One row as a line of COPY text format. NUL cannot be stored in PostgreSQL
 * text, so it is dropped rather than failing the whole page.
 */
export function copyLine(
  columns: readonly ColumnSchema[],
  row: Row,
  runId: string,
  syncedAt: string,
): string {
  const fields: string[] = [];
  for (const col of columns) {
    if (col.name === "_synced_at") {
      fields.push(syncedAt);
      continue;
    }
    if (col.name === "_run_id") {
      fields.push(copyEscape(runId));
      continue;
    }
    const v = row[col.name];
    if (v === null || v === undefined) {
      fields.push("\\N");
      continue;
    }
    let text: string;
    switch (col.type) {
      case "text":
        text = typeof v === "string" ? v : String(v);
        break;
      case "bigint":
        text = typeof v === "bigint" ? v.toString() : String(Math.trunc(Number(v)));
        break;
      case "double":
        text = String(Number(v));
        break;
      case "boolean":
        text = v ? "t" : "f";
        break;
      case "date":
        text = isoDate(toEpochDays(v, col.name));
        break;
      case "timestamp":
        // ISO 8601 with an offset is what PostgreSQL reads best; anything else is checked here.
        text = typeof v === "string" && ISO_TIMESTAMP.test(v) ? v : toDate(v, col.name).toISOString();
        break;
      case "text_array":
        text = arrayLiteral(toStringArray(v, col.name));
        break;
      case "json":
        text = jsonText(v).replaceAll("\\u0000", "");
        break;
    }
    fields.push(copyEscape(text.includes("\u0000") ? text.replaceAll("\u0000", "") : text));
  }
  return `${fields.join("\t")}\n`;
}
