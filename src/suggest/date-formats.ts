import type { Transform } from "../config/import-job.ts";
import { compileDateFormat, parseDate } from "../imports/index.ts";
import { filledValues } from "./value-kinds.ts";

const YEAR_FIRST = ["iso", "YYYY-MM-DD HH:mm", "YYYY-MM-DD HH:mm:ss", "YYYY/MM/DD", "YYYY/MM/DD HH:mm"];
const DAY_FIRST = [
  "DD.MM.YYYY",
  "D.M.YYYY",
  "DD.MM.YYYY HH:mm",
  "DD.MM.YY",
  "DD/MM/YYYY",
  "D/M/YYYY",
  "DD/MM/YYYY HH:mm",
  "DD-MM-YYYY",
];
const MONTH_FIRST = [
  "MM/DD/YYYY",
  "M/D/YYYY",
  "M/D/YYYY h:mm A",
  "M/D/YYYY H:mm",
  "MM/DD/YYYY HH:mm",
  "M/D/YY",
];

function parsesWith(format: string, values: readonly string[]): string[] {
  const compiled = [compileDateFormat(format)];
  return values.filter((v) => parseDate(v, compiled) !== undefined);
}

/**
 * The date transform a column's sampled values need: the fewest formats that
 * read them all. Day or month first is told by a value only one order reads
 * (13/02/2024), else by the file's language (dots, or German, French or
 * Spanish headers, read day first).
 */
export function dateTransformFor(values: readonly string[], dayFirstLanguage: boolean): Transform {
  const filled = filledValues(values);
  const dayOnly = filled.some(
    (v) =>
      DAY_FIRST.some((f) => parsesWith(f, [v]).length === 1) &&
      !MONTH_FIRST.some((f) => parsesWith(f, [v]).length === 1),
  );
  const monthOnly = filled.some(
    (v) =>
      MONTH_FIRST.some((f) => parsesWith(f, [v]).length === 1) &&
      !DAY_FIRST.some((f) => parsesWith(f, [v]).length === 1),
  );
  const dotted = filled.some((v) => /^\d{1,2}\.\d{1,2}\./.test(v));
  const dayFirst = dayOnly || (!monthOnly && (dotted || dayFirstLanguage));
  const candidates = [...YEAR_FIRST, ...(dayFirst ? DAY_FIRST : MONTH_FIRST)];
  const chosen: string[] = [];
  let left = filled;
  while (left.length > 0) {
    let best: { format: string; read: string[] } | undefined;
    for (const format of candidates) {
      if (chosen.includes(format)) continue;
      const read = parsesWith(format, left);
      if (read.length > (best?.read.length ?? 0)) best = { format, read };
    }
    if (!best) break;
    chosen.push(best.format);
    left = left.filter((v) => !best.read.includes(v));
  }
  return { date: chosen.length > 0 ? chosen : ["iso"] };
}
