import type { ColumnMapping } from "../../config/import-job.ts";
import { ImportFileError } from "../import-error.ts";
import { describeHeaders } from "./header-echo.ts";

/** Header matching ignores case, spaces, punctuation and accents: "E-Mail Address" = "email address". */
export function normalizeHeader(h: string): string {
  return h
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, "");
}

/**
 * A header row that ends with a delimiter has an empty last name: that
 * column is not one (Outlook's CSV writes a delimiter after every cell), and
 * rows may have it or not, as long as it is empty (map-row.ts).
 */
function withoutTrailingEmpty(headers: readonly string[]): readonly string[] {
  return headers.length > 1 && (headers[headers.length - 1] as string).trim() === ""
    ? headers.slice(0, -1)
    : headers;
}

/**
 * A file's header row as the column plan reads it: the names trimmed (an
 * empty one is `columnN`), and where each name stands, matched as
 * normalizeHeader says. Finding a column that is not there, or that the file
 * repeats without saying which, is the file's error, named with its headers.
 */
export class HeaderLookup {
  readonly headers: readonly string[];
  readonly #byName = new Map<string, number[]>();
  /** The file has a header row: a label beside a position must match it. */
  readonly #headerRow: boolean;

  constructor(headersIn: readonly string[], headerRow: boolean) {
    this.headers = withoutTrailingEmpty(headersIn).map((h, i) =>
      h.trim() === "" ? `column${i + 1}` : h.trim(),
    );
    this.#headerRow = headerRow;
    this.headers.forEach((h, i) => {
      const key = normalizeHeader(h);
      const list = this.#byName.get(key);
      if (list) list.push(i);
      else this.#byName.set(key, [i]);
    });
  }

  /** Every column of that name, first to last. */
  all(name: string): readonly number[] {
    return this.#byName.get(normalizeHeader(name)) ?? [];
  }

  /** The column's name, with its number when the file repeats it: "Email (column 7)". */
  label(index: number): string {
    const h = this.headers[index] as string;
    return this.all(h).length > 1 ? `${h} (column ${index + 1})` : h;
  }

  /** The column of a name the file has once. */
  only(name: string, where: string): number {
    const idx = this.all(name);
    if (idx.length === 0) throw this.#missing(name, where);
    if (idx.length > 1) {
      const at = idx.map((i) => i + 1);
      throw new ImportFileError(
        "file_duplicate_header",
        `the header "${name}" (${where}) appears in columns ${at.join(", ")}: say which with occurrence: 1 to ${at.length} (the first is 1), or position: ${at.join(" or ")}`,
      );
    }
    return idx[0] as number;
  }

  /** A job's column: by position, by occurrence of its name, or by a name the file has once. */
  mapped(c: ColumnMapping, where: string): number {
    if (c.position !== undefined) return this.#atPosition(c.position, c.column, where);
    const name = c.column as string;
    return c.occurrence === undefined ? this.only(name, where) : this.#occurrence(name, c.occurrence, where);
  }

  #atPosition(position: number, label: string | undefined, where: string): number {
    const index = position - 1;
    if (index >= this.headers.length) {
      throw new ImportFileError(
        "file_missing_column",
        `${where} names column ${position}, and the file has ${this.headers.length} (${describeHeaders(this.headers)})`,
      );
    }
    const at = this.headers[index] as string;
    if (label !== undefined && this.#headerRow && normalizeHeader(label) !== normalizeHeader(at)) {
      throw new ImportFileError(
        "file_missing_column",
        `${where} names column ${position} "${label}", and the file's column ${position} is headed "${at}": fix the position or the label`,
      );
    }
    return index;
  }

  #occurrence(name: string, occurrence: number, where: string): number {
    const idx = this.all(name);
    const index = idx[occurrence - 1];
    if (index !== undefined) return index;
    if (idx.length === 0) throw this.#missing(name, where);
    throw new ImportFileError(
      "file_missing_column",
      `${where} names occurrence ${occurrence} of "${name}", and the file has ${idx.length} column${idx.length === 1 ? "" : "s"} of that name (column ${idx.map((i) => i + 1).join(", ")})`,
    );
  }

  #missing(name: string, where: string): ImportFileError {
    return new ImportFileError(
      "file_missing_column",
      `${where} names the column "${name}", which the file does not have (${describeHeaders(this.headers)})`,
    );
  }
}
