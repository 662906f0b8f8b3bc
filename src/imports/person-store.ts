import type { ImportPerson } from "../api/index.ts";
import { KeyIndex } from "./dedupe.ts";
import type { MaybePromise } from "./maybe-promise.ts";
import { dedupeKey, identifierKey, mergePersons } from "./rules/index.ts";
import { type SpilledRow, SpillWriter } from "./spill.ts";

/** One version of a person: what their rows so far merge into. */
export interface PersonVersion {
  /** Its place in the store, one a valid row, in file order. */
  seq: number;
  /** The file rows merged into it, earliest first. */
  rows: number[];
  population: string | null;
  /** The identifier's value. */
  key: string | undefined;
  /** The person's JSON. */
  person: string;
}

/** What `put` made of a row: the person's new version, and the version it was merged into. */
export interface Put {
  version: PersonVersion;
  /** The seq of the person's version before this row, or -1 for a person met for the first time. */
  earlier: number;
  /** Await before the next `put` when set: the store's buffer went out to disk. */
  written: MaybePromise;
}

/** Bytes read before the key index is sized for the whole file: enough rows for their length to predict the rest. */
const ESTIMATE_AFTER_BYTES = 2 << 20;

/**
 * Every person of a run, one version a valid row: a person's later row is
 * merged (the rules' mergePersons, later values winning) into their latest
 * version, found by (population, identifier). The versions live in a spill
 * file (spill.ts), not in memory, so that memory stays flat however large the
 * file; a key index of 32-bit hashes (dedupe.ts's KeyIndex) links each
 * version to the previous one of its hash, and the store follows that chain,
 * passing over rows whose real (population, identifier) differs (a hash
 * collision, ~116 pairs among a million keys). The file is private (0o600)
 * and deleted with the run's spill folder.
 */
export class PersonStore {
  readonly #spill: SpillWriter;
  readonly #identifier: string;
  readonly #index = new KeyIndex();
  #reserved = false;

  private constructor(spill: SpillWriter, identifier: string) {
    this.#spill = spill;
    this.#identifier = identifier;
  }

  /** `setting` names what moves the file's folder (a full disk's message says it); `identifier` is the definition's target.identifier. */
  static async create(file: string, identifier: string, setting?: string): Promise<PersonStore> {
    return new PersonStore(await SpillWriter.create(file, setting), identifier);
  }

  /** Versions stored so far: the seq of the next. */
  get count(): number {
    return this.#spill.count;
  }

  /**
   * Sizes the key index for the whole file once `bytesRead` of its `size`
   * bytes gave `rows` rows, so that it does not double late, when the old and
   * the new tables would both be held at the read's peak.
   */
  expect(rows: number, bytesRead: number, size: number): void {
    if (this.#reserved || bytesRead < Math.min(ESTIMATE_AFTER_BYTES, size) || bytesRead === 0) return;
    this.#index.reserve(Math.ceil((rows * size) / bytesRead));
    this.#reserved = true;
  }

  /** Takes a valid row's person (JSON): a new person, or merged into their latest version. */
  put(row: number, population: string | null, key: string, person: string): Put {
    const seq = this.#spill.count;
    const prev = this.#index.put(dedupeKey(population, key), seq);
    const earlier = prev === -1 ? undefined : this.#latest(prev, population, key);
    if (earlier === undefined) {
      const written = this.#spill.append(row, population, prev, person);
      return { version: { seq, rows: [row], population, key, person }, earlier: -1, written };
    }
    const merged = JSON.stringify(
      mergePersons(JSON.parse(earlier.row.person) as ImportPerson, JSON.parse(person) as ImportPerson),
    );
    const rows = [...earlier.row.rows, row];
    const written = this.#spill.append(rows, population, prev, merged);
    return { version: { seq, rows, population, key, person: merged }, earlier: earlier.seq, written };
  }

  /** The version stored at `seq`. */
  version(seq: number): PersonVersion {
    const row = this.#spill.row(seq);
    return { seq, rows: row.rows, population: row.population, key: this.#keyOf(row), person: row.person };
  }

  /** The JSON of the person's first row alone: the oldest of the versions up to `seq`. */
  firstVersion(seq: number): string {
    const latest = this.#spill.row(seq);
    if (latest.rows.length <= 1) return latest.person;
    let oldest = latest;
    for (const { row } of this.#chain(latest.prev, latest.population, this.#keyOf(latest))) {
      oldest = row;
      if (oldest.rows.length <= 1) break;
    }
    return oldest.person;
  }

  /** Writes what is buffered: what a killed run leaves is then whole on disk, for the rerun to remove. */
  flush(): Promise<void> {
    return this.#spill.flush();
  }

  /** Closes the file; nothing can be read back after. */
  close(): Promise<void> {
    return this.#spill.close();
  }

  #latest(
    from: number,
    population: string | null,
    key: string,
  ): { seq: number; row: SpilledRow } | undefined {
    for (const found of this.#chain(from, population, key)) return found;
    return undefined;
  }

  #keyOf(row: SpilledRow): string | undefined {
    return identifierKey(JSON.parse(row.person) as ImportPerson, this.#identifier);
  }

  /**
   * The stored versions of one person, newest first, from `from` along each
   * row's link to the previous row of its hash: those whose real (population,
   * identifier) is this one. Read lazily: a caller that stops early reads no further.
   */
  *#chain(
    from: number,
    population: string | null,
    key: string | undefined,
  ): Generator<{ seq: number; row: SpilledRow }> {
    for (let seq = from; seq !== -1; ) {
      const row = this.#spill.row(seq);
      if (row.population === population && this.#keyOf(row) === key) yield { seq, row };
      seq = row.prev;
    }
  }
}
