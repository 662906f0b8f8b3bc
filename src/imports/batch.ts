import { SPEC_DEFAULTS } from "../api/decisions.ts";

/** One person ready to send, with the rows it came from (more than one when duplicates merged). */
export interface BatchEntry {
  rows: number[];
  /** JSON of the person. */
  person: string;
}

export interface Batch {
  /** 0-based, in the order batches fill; the same file and definition give the same numbering. */
  index: number;
  population: string | null;
  entries: BatchEntry[];
}

/**
 * Groups people into requests of at most `size`. One request carries one
 * population id, so each population fills its own batch.
 */
export class Batcher {
  #size: number;
  #open = new Map<string, BatchEntry[]>();
  #next = 0;

  constructor(size: number) {
    this.#size = size;
  }

  /** Adds an entry; returns the batch it completed, if any. */
  add(population: string | null, entry: BatchEntry): Batch | undefined {
    const key = population ?? "";
    let list = this.#open.get(key);
    if (list === undefined) {
      list = [];
      this.#open.set(key, list);
    }
    list.push(entry);
    if (list.length < this.#size) return undefined;
    this.#open.delete(key);
    return { index: this.#next++, population, entries: list };
  }

  /** The partly filled batches, in the order their populations first appeared. */
  *finish(): Generator<Batch> {
    for (const [key, entries] of this.#open) {
      yield { index: this.#next++, population: key === "" ? null : key, entries };
    }
    this.#open.clear();
  }
}

/**
 * The request body as text, built without re-serialising each person.
 * `person` texts are JSON of people checked against the contract's
 * ImportPerson as they were mapped (map-row.ts), with the identifier the
 * selector names present (the row was keyed by it), so the body is valid by
 * construction and goes out as is (CallInput.bodyText).
 * test/imports/batch-body.test.ts parses the bytes sent against ImportParticipantsBody.
 */
export function batchBody(
  entries: readonly BatchEntry[],
  identifierField: string,
  identifier: string,
  populationField: string,
  population: string | null,
): string {
  let people = "";
  for (let i = 0; i < entries.length; i++) people += i === 0 ? entries[i]?.person : `,${entries[i]?.person}`;
  const pop = population === null ? "" : `,${JSON.stringify(populationField)}:${JSON.stringify(population)}`;
  return `{"people":[${people}],${JSON.stringify(identifierField)}:${JSON.stringify(identifier)}${pop}}`;
}

/** batchBody with the field names the contract uses (SPEC_DEFAULTS). */
export function importBody(
  entries: readonly BatchEntry[],
  identifier: string,
  population: string | null,
): string {
  return batchBody(
    entries,
    SPEC_DEFAULTS.importIdentifierField,
    identifier,
    SPEC_DEFAULTS.importPopulationField,
    population,
  );
}
