import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { chmod } from "node:fs/promises";
import path from "node:path";
import { type Stringifier, stringify } from "csv-stringify";
import type { DroppedValue } from "./row-problem.ts";

/** One line per value left out of an imported person; `reason` is the problem's message. */
const WARNING_COLUMNS = ["row", "field", "column", "code", "reason"] as const;

/** A value left out, with its row: the header is row 1, as in the rejects file. */
export type WarningLine = Pick<DroppedValue, "field" | "column" | "code" | "message"> & { row: number };

/**
 * Where the warnings go when the caller names no file: beside the rejects,
 * `x.rejects.csv` → `x.warnings.csv`, any other `x.csv` → `x.warnings.csv`.
 */
export function warningsFileBeside(rejectsFile: string): string {
  const dir = path.dirname(rejectsFile);
  const base = path.basename(rejectsFile).replace(/(\.rejects)?\.csv$/i, "");
  return path.join(dir, `${base}.warnings.csv`);
}

/**
 * The warnings CSV: the values `invalidOptionalValues: drop` left out of
 * people who were imported, one line each. It names the row, field, column
 * and reason, never the value, yet it points into personal data, so it is
 * private to its owner like the rejects file. Created on the first line only.
 * Headers are the file's own text: formulas are escaped as in the rejects file.
 */
export class WarningsWriter {
  readonly path: string;
  #out: Stringifier | undefined;
  #file: WriteStream | undefined;
  #count = 0;

  constructor(file: string) {
    this.path = file;
  }

  get count(): number {
    return this.#count;
  }

  async write(line: WarningLine): Promise<void> {
    if (this.#out === undefined) await this.#open();
    const out = this.#out as Stringifier;
    this.#count++;
    if (!out.write([String(line.row), line.field, line.column, line.code, line.message])) {
      await once(out, "drain");
    }
  }

  async #open(): Promise<void> {
    this.#file = createWriteStream(this.path, { mode: 0o600 });
    await once(this.#file, "open");
    // mode only applies when the file is created; an older file keeps its own.
    await chmod(this.path, 0o600);
    this.#out = stringify({ escape_formulas: true });
    this.#out.pipe(this.#file);
    this.#out.write([...WARNING_COLUMNS]);
  }

  /** Resolves when everything is on disk; the path, or null when there was nothing to write. */
  async close(): Promise<string | null> {
    const out = this.#out;
    const file = this.#file;
    this.#out = undefined;
    this.#file = undefined;
    if (out === undefined || file === undefined) return null;
    if (!file.closed) {
      const closed = once(file, "close");
      out.end();
      await closed;
    }
    return this.path;
  }
}
