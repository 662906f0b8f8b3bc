// What the page says in words: durations, times, values and reports.
import type { ColumnSuggestion } from "../../../suggest/suggestion.ts";
import { JobReport } from "../api-contract.ts";

/** A duration for people: "45 s", "3 min 20 s", "1 h 5 min". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A time of day in the browser's zone, with "in …" from now. */
export function when(iso: string): string {
  const t = new Date(iso);
  const ahead = t.getTime() - Date.now();
  return `${t.toLocaleTimeString()}${ahead > 1000 ? ` (in ${duration(ahead)})` : ""}`;
}

/** Whether an ISO time is still to come. */
export const ahead = (iso: string | null): iso is string => iso !== null && Date.parse(iso) > Date.now();

/** A value of a person as a request carries it, in a table cell. */
export function shown(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.map(shown).join(", ");
  if (typeof value === "object") {
    return "propertyId" in value && "value" in value
      ? `${String(value.propertyId)}=${shown(value.value)}`
      : JSON.stringify(value);
  }
  return String(value);
}

/** Where a column's suggestion came from, as the "Why" column says it when the suggestion has no note. */
export const WHY: Record<ColumnSuggestion["why"], string> = {
  preset: "a CRM export's column",
  header: "its header",
  values: "its values",
  property: "a workspace property's name",
  none: "nothing matched",
};

/** A finished run's report, when it is one this page reads (a report of an older version may not be). */
export function reportOf(report: unknown): JobReport | null {
  const parsed = JobReport.safeParse(report);
  return parsed.success ? parsed.data : null;
}

/** What a run did, in a few words: an import's counts, an export's rows. */
export function reportInWords(report: JobReport | null): string {
  if (!report) return "";
  if (!("kind" in report)) return `${report.totals.rows} rows exported in ${report.totals.requests} requests`;
  if (report.kind === "import") {
    return `${report.rowsRead} rows read, ${report.imported} ${report.dryRun ? "would be imported" : "imported"}, ${report.rejected} rejected`;
  }
  return `${report.rowsRead} rows read, ${report.updated} opted out, ${report.rejected} rejected`;
}
