/**
 * How a rejects file's cells differ from the rows they came from, and how
 * they are put back when the corrected file is imported again.
 *
 * Written: csv-stringify's `escape_formulas` puts `'` before a cell a
 * spreadsheet would run as a formula, and a cell that already starts with `'`
 * gets a second one. So in a rejects file every original cell that starts
 * with `'` has exactly one `'` more than it had.
 *
 * Read: a file whose header starts with `_source_row,_reject_reason` is taken
 * for a rejects file: those columns (and `_reject_code` after them, which
 * files written before it was added lack) are dropped and one leading `'`
 * comes off every other cell, header included. Any other file is read as it
 * is, so a genuine `'=…` in a CRM export is never altered.
 */

export const REJECT_COLUMNS = ["_source_row", "_reject_reason", "_reject_code"] as const;

/** How many leading columns of a file with this header are the rejects file's own: 3, 2 (older files) or 0. */
export function rejectColumnCount(header: readonly string[]): number {
  if (REJECT_COLUMNS.every((name, i) => header[i]?.trim() === name)) return REJECT_COLUMNS.length;
  return REJECT_COLUMNS.slice(0, 2).every((name, i) => header[i]?.trim() === name) ? 2 : 0;
}

const APOSTROPHE = 39;

/** A cell of the original row as the rejects file holds it, before csv-stringify's formula escape. */
export function guardApostrophe(cell: string): string {
  return cell.charCodeAt(0) === APOSTROPHE ? `'${cell}` : cell;
}

/** The cells of a rejects file's record as they were in the original file, past its `own` leading columns. */
function restoreRejectedCells(cells: readonly string[], own: number = REJECT_COLUMNS.length): string[] {
  const out = new Array<string>(Math.max(0, cells.length - own));
  for (let i = own; i < cells.length; i++) {
    const c = cells[i] as string;
    out[i - own] = c.charCodeAt(0) === APOSTROPHE ? c.slice(1) : c;
  }
  return out;
}

/** The shape of read-records' chunks, restated so that this module needs nothing from it. */
interface Chunk {
  firstRow: number;
  length: number;
  cells(i: number): string[];
}

/**
 * Passes a file's chunks through, restoring every record when its first
 * non-blank record is a rejects header. Other files' chunks are not touched.
 */
export async function* restoreRejectsFile<C extends Chunk>(chunks: AsyncIterable<C>): AsyncGenerator<C> {
  let own: number | undefined;
  for await (const chunk of chunks) {
    for (let i = 0; own === undefined && i < chunk.length; i++) {
      const cells = chunk.cells(i);
      if (cells.some((c) => c.trim() !== "")) own = rejectColumnCount(cells);
    }
    if (!own) {
      yield chunk;
      continue;
    }
    const columns = own;
    yield { ...chunk, cells: (i: number) => restoreRejectedCells(chunk.cells(i), columns) };
  }
}
