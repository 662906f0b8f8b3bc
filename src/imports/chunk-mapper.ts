import type { ImportJobDefinition } from "../config/import-job.ts";
import { ChunkBuilder, type MappedChunk } from "./mapped-transport.ts";
import { isBlank, isShortRow, mapRow, planHeader, type RowPlan } from "./rules/index.ts";

/** The shape of read-records' chunks, restated so that this module needs nothing from it. */
export interface CellChunk {
  firstRow: number;
  length: number;
  bytesRead: number;
  cells(i: number): string[];
}

export interface ChunkMapperOptions {
  /** Chunks given back hold at most about this many characters of people, so that neither heap sees a large object. */
  maxChars?: number;
  /** Stamp every valid row for the change-only state, here rather than on the main thread. */
  stamps?: boolean;
}

/**
 * Maps a file's rows to people, chunk by chunk, in either thread: skips the
 * definition's `skipRows` and blank rows, plans the columns at the header
 * (once: the plan goes with the chunk), then maps every row (map-row.ts) and
 * packs it for the main thread (mapped-transport.ts).
 */
export class ChunkMapper {
  readonly #def: ImportJobDefinition;
  readonly #maxChars: number;
  readonly #stamps: boolean;
  #skipped = 0;
  #plan: RowPlan | undefined;
  #failed = false;

  constructor(def: ImportJobDefinition, options: ChunkMapperOptions = {}) {
    this.#def = def;
    this.#maxChars = options.maxChars ?? Number.POSITIVE_INFINITY;
    this.#stamps = options.stamps ?? false;
  }

  *map(chunk: CellChunk): Generator<MappedChunk> {
    let out = new ChunkBuilder(chunk.length, this.#stamps);
    for (let i = 0; i < chunk.length && !this.#failed; i++) {
      const row = chunk.firstRow + i;
      const cells = chunk.cells(i);
      if (this.#plan === undefined) {
        if (this.#skipped < this.#def.source.skipRows) {
          this.#skipped++;
          continue;
        }
        if (isBlank(cells)) {
          out.blankRows++;
          continue;
        }
        if (!this.#planAt(cells, out)) break;
        if (this.#def.source.header) continue;
      }
      if (isBlank(cells)) {
        out.blankRows++;
        continue;
      }
      const mapped = mapRow(this.#plan as RowPlan, cells, row);
      const short = isShortRow((this.#plan as RowPlan).width, cells);
      out.add(
        row,
        short,
        mapped.ok
          ? {
              ok: true,
              person: JSON.stringify(mapped.person),
              key: mapped.key,
              population: mapped.population,
              dropped: mapped.dropped,
              optInHeldBack: mapped.optInHeldBack,
              optedOut: mapped.person.isOptedOut === true,
            }
          : { ok: false, issues: mapped.issues, cells },
      );
      if (out.people.length >= this.#maxChars && i + 1 < chunk.length) {
        yield out.finish(chunk.bytesRead);
        out = new ChunkBuilder(chunk.length - i - 1, this.#stamps);
      }
    }
    yield out.finish(chunk.bytesRead);
  }

  /** Plans the columns at the header row; false when the plan refused it. */
  #planAt(cells: string[], out: ChunkBuilder): boolean {
    try {
      const { columns, plan } = planHeader(this.#def, cells);
      this.#plan = plan;
      out.planned = { headers: columns.headers, unmapped: columns.unmapped, ignored: columns.ignored };
      return true;
    } catch {
      // The main thread plans this header again, and so throws the error whole, with its own class.
      out.refusedHeader = [...cells];
      this.#failed = true;
      return false;
    }
  }
}
