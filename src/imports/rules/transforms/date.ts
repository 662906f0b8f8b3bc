import type { RowProblem } from "../../row-problem.ts";
import { eachString, fail, type TransformFn } from "./cell-value.ts";

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const TOKEN = /YYYY|YY|MMMM|MMM|MM|M|DD|D|HH|H|hh|h|mm|ss|A/g;

type Part = "year4" | "year2" | "month" | "monthName" | "day" | "skip";

interface CompiledFormat {
  re: RegExp;
  parts: Part[];
  /** The ISO format: its date's digits always sit at the same places, so a match array is not needed to read them. */
  iso?: boolean;
}

const TOKEN_RE: Record<string, [string, Part]> = {
  YYYY: ["(\\d{4})", "year4"],
  YY: ["(\\d{2})", "year2"],
  MMMM: ["([A-Za-z]+)", "monthName"],
  MMM: ["([A-Za-z]{3})\\.?", "monthName"],
  MM: ["(\\d{2})", "month"],
  M: ["(\\d{1,2})", "month"],
  DD: ["(\\d{2})", "day"],
  D: ["(\\d{1,2})", "day"],
  HH: ["(\\d{2})", "skip"],
  H: ["(\\d{1,2})", "skip"],
  hh: ["(\\d{2})", "skip"],
  h: ["(\\d{1,2})", "skip"],
  mm: ["(\\d{2})", "skip"],
  ss: ["(\\d{2}(?:\\.\\d+)?)", "skip"],
  A: ["([AaPp][Mm])", "skip"],
};

function literalPattern(literal: string): string {
  // A space in a format stands for any run of spaces; everything else is literal.
  return literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ +/g, "\\s+");
}

/** Compiles a format such as `MM/DD/YYYY` or `D MMM YYYY HH:mm` into a matcher. */
export function compileDateFormat(format: string): CompiledFormat {
  if (format === "iso") {
    return {
      re: /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/,
      parts: ["year4", "month", "day"],
      iso: true,
    };
  }
  let re = "^";
  const parts: Part[] = [];
  let last = 0;
  for (const m of format.matchAll(TOKEN)) {
    re += literalPattern(format.slice(last, m.index));
    const [pattern, part] = TOKEN_RE[m[0]] as [string, Part];
    re += pattern;
    parts.push(part);
    last = m.index + m[0].length;
  }
  re += `${literalPattern(format.slice(last))}$`;
  return { re: new RegExp(re), parts };
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in a month of the proleptic Gregorian calendar; arithmetic, as a Date a cell cost ~0.2 µs. */
export function daysIn(year: number, month: number): number {
  if (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) return 29;
  return DAYS_IN_MONTH[month - 1] as number;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** The number written by the ASCII digits of `s` from `at`, `count` of them. */
function digitsAt(s: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) n = n * 10 + s.charCodeAt(i) - 48;
  return n;
}

/** Tries each format in turn; the first that matches a real calendar day wins. */
export function parseDate(value: string, formats: readonly CompiledFormat[]): string | undefined {
  const s = value.trim();
  for (const f of formats) {
    if (f.iso) {
      // Most dates of an export are ISO: a match array, its groups and the padded result made ~300 bytes of garbage a cell.
      if (!f.re.test(s)) continue;
      const year = digitsAt(s, 0, 4);
      const month = digitsAt(s, 5, 2);
      const day = digitsAt(s, 8, 2);
      if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) continue;
      // Its first ten characters are the date: the digits as pad() would write them, and the dashes.
      return s.slice(0, 10);
    }
    const m = f.re.exec(s);
    if (m === null) continue;
    let year = -1;
    let month = -1;
    let day = -1;
    for (let i = 0; i < f.parts.length; i++) {
      const part = f.parts[i];
      const g = m[i + 1] ?? "";
      if (part === "year4") year = Number(g);
      else if (part === "year2") {
        // Two-digit years: 00–69 are 2000–2069, 70–99 are 1970–1999 (POSIX strptime's pivot).
        const yy = Number(g);
        year = yy < 70 ? 2000 + yy : 1900 + yy;
      } else if (part === "month") month = Number(g);
      else if (part === "monthName") {
        const idx = MONTHS.indexOf(g.slice(0, 3).toLowerCase());
        month = idx < 0 ? -1 : idx + 1;
      } else if (part === "day") day = Number(g);
    }
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) continue;
    return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  }
  return undefined;
}

/** Dates in the given formats → YYYY-MM-DD. An ISO date-time keeps its date as written, offset ignored. */
export function toIsoDate(formats: readonly string[]): TransformFn {
  const compiled = formats.map(compileDateFormat);
  const failure: RowProblem = fail("invalid_date", `not a date in the format ${formats.join(" or ")}`);
  return eachString((s) => parseDate(s, compiled) ?? failure);
}
