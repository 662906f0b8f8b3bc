import type { ImportPerson } from "../api/index.ts";
import { type Batch, type BatchEntry, Batcher } from "./batch.ts";
import { dedupeKey, mergePersons, type SeqLinks } from "./dedupe.ts";
import { identifierKey } from "./map-row.ts";
import type { PendingPerson } from "./sent-state.ts";
import type { SpilledRow, SpillReader } from "./spill.ts";

export interface MergePhaseInput {
  reader: SpillReader;
  links: SeqLinks;
  /** The definition's target.identifier: email, phone or property:<id>. */
  identifier: string;
  batchSize: number;
  /**
   * Says which of a chunk's people to send (sent-state.ts): the others are
   * unchanged since the last run and never reach a batch, so batches stay
   * full. Without it everyone is sent.
   */
  sieve?: (people: readonly PendingPerson[]) => Promise<boolean[]>;
  /** Hears of each person the sieve held back. */
  onUnchanged?: (entry: BatchEntry) => void;
  signal?: AbortSignal;
}

/**
 * Phase 2, merge duplicates: the spill read back in order, each person sent
 * once, at the last of their rows, with their rows merged earliest first
 * (later values win), grouped into batches of one population each. Yields
 * the batches in index order; the same file and definition always give the
 * same batches, which is what lets the ledger resume by index — unless a
 * sieve leaves out people unchanged since the last run, when the numbering
 * also depends on the change state (run-import.ts keeps such runs apart).
 */
export async function* mergedBatches(input: MergePhaseInput): AsyncGenerator<Batch> {
  const { reader, links } = input;
  const batcher = new Batcher(input.batchSize);
  let full: Batch[] = [];
  const batch = (population: string | null, entry: BatchEntry) => {
    const done = batcher.add(population, entry);
    if (done) full.push(done);
  };
  let pending: PendingPerson[] = [];
  const sieving = new SieveQueue(input, batch);
  const add = input.sieve
    ? (population: string | null, entry: BatchEntry) => {
        pending.push({ population, entry });
      }
    : batch;
  for await (const chunk of reader.chunks(input.signal)) {
    for (let i = 0; i < chunk.rows.length; i++) {
      const seq = chunk.firstSeq + i;
      if (links.isSuperseded(seq)) continue;
      const row = chunk.rows[i] as number;
      const population = chunk.populations[i] as string | null;
      const person = chunk.persons[i] as string;
      if (links.prev(seq) === -1) add(population, { rows: [row], person });
      else {
        for (const m of mergeAt(input, seq, { row, population, person })) {
          add(m.population, { rows: m.rows, person: m.person });
        }
      }
    }
    if (pending.length >= SIEVE_AT_ONCE) {
      await sieving.push(pending);
      pending = [];
    }
    if (full.length > 0) {
      const ready = full;
      full = [];
      yield* ready;
    }
  }
  if (input.sieve) {
    await sieving.push(pending);
    await sieving.drain();
    yield* full;
  }
  yield* batcher.finish();
}

/** People asked of the change state at once (one script call, sent-state.ts): a spill chunk holds only a few hundred. */
const SIEVE_AT_ONCE = 2048;

/**
 * Groups of people on their way through the sieve, two at a time: the next
 * group is stamped while the change state answers for the one before, and
 * the answers are applied in order, so batches fill as they would one by one.
 */
class SieveQueue {
  #input: MergePhaseInput;
  #batch: (population: string | null, entry: BatchEntry) => void;
  #ahead: { people: PendingPerson[]; send: Promise<boolean[]> } | undefined;

  constructor(input: MergePhaseInput, batch: (population: string | null, entry: BatchEntry) => void) {
    this.#input = input;
    this.#batch = batch;
  }

  /** Starts `people` through the sieve and applies the group before it. */
  async push(people: PendingPerson[]): Promise<void> {
    const sieve = this.#input.sieve;
    if (!sieve || people.length === 0) return;
    const next = { people, send: sieve(people) };
    // Awaited below or by drain(); until then a failure must not count as unhandled.
    next.send.catch(() => {});
    await this.drain();
    this.#ahead = next;
  }

  /** Applies the group in flight, if any. */
  async drain(): Promise<void> {
    const ahead = this.#ahead;
    if (!ahead) return;
    this.#ahead = undefined;
    const send = await ahead.send;
    ahead.people.forEach((p, i) => {
      if (send[i]) this.#batch(p.population, p.entry);
      else this.#input.onUnchanged?.(p.entry);
    });
  }
}

/** The last row of a person: the earlier ones gathered and merged into it, earliest first. */
function mergeAt(
  input: MergePhaseInput,
  seq: number,
  last: SpilledRow,
): (BatchEntry & { population: string | null })[] {
  const chain: number[] = [];
  for (let p = input.links.prev(seq); p !== -1; p = input.links.prev(p)) chain.push(p);
  chain.reverse();
  const rows = [...chain.map((p) => input.reader.row(p)), last];
  // Rows that share a hash but not a key (a 64-bit collision) stay separate people.
  const groups = new Map<string, SpilledRow[]>();
  for (const r of rows) {
    const key = dedupeKey(
      r.population,
      identifierKey(JSON.parse(r.person) as ImportPerson, input.identifier) ?? "",
    );
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  const out: (BatchEntry & { population: string | null })[] = [];
  for (const group of groups.values()) {
    let person = JSON.parse((group[0] as SpilledRow).person) as ImportPerson;
    for (const r of group.slice(1)) person = mergePersons(person, JSON.parse(r.person) as ImportPerson);
    out.push({
      population: (group[group.length - 1] as SpilledRow).population,
      rows: group.map((r) => r.row),
      person: JSON.stringify(person),
    });
  }
  return out;
}
