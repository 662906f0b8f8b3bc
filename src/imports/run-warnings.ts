import { closeSync, createReadStream, openSync, writeSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import type { InvalidOptionalPolicy } from "../config/import-job.ts";
import { type DroppedValue, type RowProblem, RowProblemCode } from "./row-problem.ts";
import { PHONE_NEEDS_COUNTRY } from "./rules/index.ts";
import { type WarningLine, WarningsWriter } from "./warnings-file.ts";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Bytes of log lines held before one synchronous write: a row's hot path does no awaiting. */
const FLUSH_AT = 64 * 1024;

export interface RunWarningsOptions {
  /** The run's private folder (0700, removed at the end): the log of dropped values lives there. */
  workDir: string;
  policy: InvalidOptionalPolicy;
}

/** What the warnings phase found, as the report counts it. */
export interface WarningCounts {
  invalidOptionalValues: InvalidOptionalPolicy;
  /** Values left out of imported people (`drop`); each is a line of `warningsFile`. */
  droppedValues: number;
  rowsWithDroppedValues: number;
  /** Field → reason → values left out. */
  droppedByField: Record<string, Record<string, number>>;
  /** The warnings CSV, or null when nothing was left out. */
  warningsFile: string | null;
  phonesWithoutCountry: number;
  /** Lines for the report's warnings: the hint to give a default phone country. */
  warnings: string[];
}

export interface FinishOptions {
  /** Where the warnings CSV goes; created only when an imported person lost a value. */
  warningsFile: string;
  /** Rows the service refused after mapping: they are in the rejects file, so not in the warnings. */
  refusedRows: ReadonlyMap<number, unknown>;
}

/**
 * What a finished run must not keep quiet about, gathered row by row as the
 * file is read and mapped: values `invalidOptionalValues: drop` left out of people, and
 * phone numbers that failed only for want of a default country.
 *
 * Which rows end up imported is known only after the service has answered, so
 * dropped values go to a private log (row, field, column, code, reason — never
 * the value) and become the warnings CSV and the report's counts at the end,
 * without the rows the service refused.
 */
export class RunWarnings {
  readonly policy: InvalidOptionalPolicy;
  #logPath: string;
  #fd: number | undefined;
  #pending: string[] = [];
  #pendingChars = 0;
  #logged = 0;
  /** Phone values that failed for want of a default country, in any row. */
  #phonesWithoutCountry = 0;
  /** Rows rejected for that reason and no other. */
  #rowsRejectedForCountry = 0;
  /** Such values left out of imported people under `drop`. */
  #phonesDroppedForCountry = 0;

  constructor(options: RunWarningsOptions) {
    this.policy = options.policy;
    this.#logPath = path.join(options.workDir, "dropped-values.jsonl");
  }

  /** Notes the values `drop` left out of the person of one row. Synchronous: it is called for many rows. */
  dropped(row: number, values: readonly DroppedValue[]): void {
    for (const d of values) {
      if (d.code === PHONE_NEEDS_COUNTRY) {
        this.#phonesWithoutCountry++;
        this.#phonesDroppedForCountry++;
      }
      this.#log(JSON.stringify([row, d.field, d.column, d.code, d.message]));
    }
  }

  /** Notes why a row was rejected: a phone that failed only for want of a country is counted. */
  refused(issues: readonly RowProblem[]): void {
    let forCountry = 0;
    for (const i of issues) if (i.code === PHONE_NEEDS_COUNTRY) forCountry++;
    if (forCountry === 0) return;
    this.#phonesWithoutCountry += forCountry;
    if (forCountry === issues.length) this.#rowsRejectedForCountry++;
  }

  #log(line: string): void {
    this.#pending.push(line);
    this.#pendingChars += line.length + 1;
    this.#logged++;
    if (this.#pendingChars >= FLUSH_AT) this.#flush();
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    this.#fd ??= openSync(this.#logPath, "wx", 0o600);
    writeSync(this.#fd, `${this.#pending.join("\n")}\n`);
    this.#pending = [];
    this.#pendingChars = 0;
  }

  /**
   * Writes the warnings CSV and returns the counts. They count what the
   * warnings file lists: values left out of people who were imported (or,
   * in a dry run, would be).
   */
  async finish(options: FinishOptions): Promise<WarningCounts> {
    const counts = quietWarnings(this.policy);
    counts.phonesWithoutCountry = this.#phonesWithoutCountry;
    const phoneHint = this.#phoneHint();
    if (phoneHint) counts.warnings.push(phoneHint);
    if (this.#logged === 0) return counts;
    this.end();

    const writer = new WarningsWriter(options.warningsFile);
    const byField: Record<string, Record<string, number>> = {};
    const rows = new Set<number>();
    try {
      const lines = createInterface({ input: createReadStream(this.#logPath), crlfDelay: Infinity });
      for await (const text of lines) {
        if (text === "") continue;
        const [row, field, column, code, message] = JSON.parse(text) as [
          number,
          string,
          string,
          string,
          string,
        ];
        if (options.refusedRows.has(row)) continue;
        const line: WarningLine = { row, field, column, code: RowProblemCode.parse(code), message };
        await writer.write(line);
        const reasons = byField[field] ?? {};
        reasons[message] = (reasons[message] ?? 0) + 1;
        byField[field] = reasons;
        rows.add(row);
      }
    } finally {
      counts.warningsFile = await writer.close();
    }
    counts.droppedValues = writer.count;
    counts.rowsWithDroppedValues = rows.size;
    counts.droppedByField = byField;
    return counts;
  }

  #phoneHint(): string | undefined {
    const n = this.#phonesWithoutCountry;
    if (n === 0) return undefined;
    const rows = this.#rowsRejectedForCountry;
    const dropped = this.#phonesDroppedForCountry;
    const what = [
      rows > 0 ? `${plural(rows, "row")} rejected for that alone` : "",
      dropped > 0 ? `${plural(dropped, "number")} left out of imported people` : "",
    ].filter(Boolean);
    const detail = what.length > 0 ? ` (${what.join("; ")})` : "";
    const have = n === 1 ? "1 phone number has" : `${n} phone numbers have`;
    return `${have} no + and there is no default country to read ${n === 1 ? "it" : "them"} in${detail}: set the phone country, e.g. --phone-country US (the console's Phone country, job key phoneCountry)`;
  }

  /** The log written out and closed: nothing more is noted. The run's folder, and the log with it, is removed by the run. */
  end(): void {
    this.#flush();
    this.#close();
  }

  /** A failed read's log closed unwritten: a write here must not hide the read's own error. */
  abandon(): void {
    this.#pending = [];
    this.#close();
  }

  #close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** The warnings phase's counts before anything was noted (and of a run that failed before it). */
export function quietWarnings(policy: InvalidOptionalPolicy = "reject"): WarningCounts {
  return {
    invalidOptionalValues: policy,
    droppedValues: 0,
    rowsWithDroppedValues: 0,
    droppedByField: {},
    warningsFile: null,
    phonesWithoutCountry: 0,
    warnings: [],
  };
}
