import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { chmod } from "node:fs/promises";
import { type Stringifier, stringify } from "csv-stringify";
import { writeFailure } from "../errors/index.ts";
import { endAndClose } from "./end-and-close.ts";
import type { MaybePromise } from "./maybe-promise.ts";
import { guardApostrophe, REJECT_COLUMNS } from "./rejects-file.ts";
import type { RowProblemCode } from "./row-problem.ts";

export { REJECT_COLUMNS } from "./rejects-file.ts";

/** How the source file was written, for a rejects file that opens in the same spreadsheet as it did. */
export interface RejectsFileLike {
  /** The source's delimiter: `,`, `;` or a tab. */
  delimiter?: string;
  /** The source had a byte-order mark: the rejects file starts with a UTF-8 one (what spreadsheets read as UTF-8). */
  bom?: boolean;
}

/**
 * The rejects CSV: `_source_row`, `_reject_reason`, `_reject_code` (the
 * row's problem codes, joined with ";": docs/errors.md, "Row-level codes"),
 * then the row's original cells (a ragged row keeps all of its cells). Created on the first reject
 * only, private to its owner (it holds personal data), with csv-stringify's
 * formula escaping so that a cell such as `=HYPERLINK(…)` cannot run when
 * opened in a spreadsheet. A cell that starts with `'` gets another, so that
 * importing the corrected file restores every cell exactly (rejects-file.ts).
 *
 * The run that makes it closes it, whatever happens; the phases only write
 * to it. The file's header row is known once the read phase has read it
 * (`useHeaders`), before the first reject.
 */
export class RejectsWriter {
  readonly path: string;
  #headers: readonly string[] | undefined;
  #out: Stringifier | undefined;
  #file: WriteStream | undefined;
  #count = 0;
  #opening: Promise<void> | undefined;
  /** The file's write failure (a full disk, say), said at the next write or at close. */
  #failed: { error: unknown } | undefined;
  #failure: Promise<never> | undefined;

  readonly #like: RejectsFileLike;

  /** `like`: the source file's delimiter and whether it had a byte-order mark, so that the rejects open as it did. */
  constructor(path: string, headers?: readonly string[], like: RejectsFileLike = {}) {
    this.path = path;
    this.#headers = headers;
    this.#like = like;
  }

  /** The source file's header row, which follows the reject columns. */
  useHeaders(headers: readonly string[]): void {
    this.#headers = headers;
  }

  get count(): number {
    return this.#count;
  }

  /** Returns a promise to await when the file is being opened or is behind; else undefined. */
  write(
    row: number,
    reason: string,
    codes: readonly RowProblemCode[],
    cells: readonly string[],
  ): MaybePromise {
    if (this.#out === undefined) {
      this.#opening ??= this.#open();
      return this.#opening.then(() => this.write(row, reason, codes, cells));
    }
    if (this.#failed) throw this.#failed.error;
    this.#count++;
    if (!this.#out.write([String(row), reason, codes.join(";"), ...cells.map(guardApostrophe)]))
      // A file that failed takes nothing more: the drain would never come.
      return Promise.race([once(this.#out, "drain").then(() => {}), this.#failure as Promise<never>]);
    return undefined;
  }

  async #open(): Promise<void> {
    if (this.#out === undefined) {
      const headers = this.#headers;
      if (headers === undefined) throw new Error("a reject was written before the file's headers were known");
      const setting = "--rejects (by default it is under paths.dataDir)";
      this.#file = createWriteStream(this.path, { mode: 0o600 });
      this.#failure = new Promise<never>((_resolve, reject) => {
        this.#file?.on("error", (err) => {
          this.#failed ??= { error: writeFailure(err, { path: this.path, setting }) };
          reject(this.#failed.error);
        });
      });
      this.#failure.catch(() => {});
      await Promise.race([once(this.#file, "open"), this.#failure]);
      // mode only applies when the file is created; an older file keeps its own.
      await chmod(this.path, 0o600);
      this.#out = stringify({
        escape_formulas: true,
        delimiter: this.#like.delimiter ?? ",",
        bom: this.#like.bom === true,
      });
      this.#out.pipe(this.#file);
      this.#out.write([...REJECT_COLUMNS, ...headers.map(guardApostrophe)]);
    }
  }

  /** Resolves when everything is on disk; the path, or null when nothing was rejected. */
  async close(): Promise<string | null> {
    const out = this.#out;
    const file = this.#file;
    if (out === undefined || file === undefined) return this.#count > 0 ? this.path : null;
    this.#out = undefined;
    this.#file = undefined;
    if (this.#failed) {
      file.destroy();
      throw this.#failed.error;
    }
    await Promise.race([endAndClose(out, file), this.#failure as Promise<never>]);
    return this.path;
  }
}
