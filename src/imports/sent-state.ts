import { hash } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import type { ImportPerson } from "../api/index.ts";
import type { ImportJobDefinition } from "../config/import-job.ts";
import type { BatchEntry } from "./batch.ts";
import { hashValue } from "./file-hash.ts";
import { identifierKey } from "./map-row.ts";
import { hash64, hash64Pair } from "./stamp-hash.ts";

export { hash64 } from "./stamp-hash.ts";

/**
 * What the last successful runs sent, person by person, so that a re-import
 * sends only the people whose mapped data changed, and the new ones.
 *
 * Layout in Redis, all under one hash tag (one Cluster slot per scope):
 *
 * - `<prefix>:sent:{<scope>}:meta` — a hash: `bits`, the layout the buckets
 *   use, and `at`, written when a run finishes. Until the first run of a scope
 *   finishes there is no state to compare with: a retry of that run resumes
 *   from the ledger batch by batch, as an import without this state does.
 * - `<prefix>:sent:{<scope>}:b<bits>:<bucket>` — a hash per bucket: field, a
 *   64-bit hash of (population, identifier value), whose first `bits` bits
 *   pick the bucket; value, a 64-bit hash of the person's JSON exactly as it
 *   was sent (stamp-hash.ts, 8 bytes each). `bits` is chosen so that a bucket
 *   holds ~64 people and stays a small listpack: 25 bytes a person in all,
 *   measured at 100,000 people (docs/imports.md). A person sent merged from
 *   several rows has a second pair in the same bucket: the field with its last
 *   byte complemented, and the digest of the version of their first row alone
 *   (FIRST_ROWS). A later run whose first row of that person gives that digest
 *   holds the person back until their later rows are merged, instead of
 *   sending the partial version and then the merged one (merge-phase.ts).
 *
 * A run that compares writes the people the service accepted as their
 * answers come. A first or full run gathers its stamps (StampLog, 16 bytes a
 * person) and writes them bucket by bucket, each time FLUSH_AT have gathered
 * and at `finish`: its writes could not be read before `finish` wrote the
 * layout anyway, and one HSET of many people of a bucket costs Redis and the
 * client a small part of as many one-person writes (2.8 s of Redis's time for
 * 300,000 people, docs/performance.md). A first run that fails may not have
 * written the people of its last batches; its retry records the batches the
 * ledger resumes as well as those it sends.
 *
 * The scope (sentStateScope) names the stamps' format (SENT_STATE_FORMAT),
 * the service, a fingerprint of the token, the study, the population mapping,
 * the identifier and the mapping: a change of any of them starts from
 * nothing, so everyone is sent. Every key expires SENT_STATE_TTL_SECONDS
 * after the last write or finished run of its scope.
 */

/**
 * How people are stamped, part of the scope: a state written with other
 * stamps lives under other keys and is never read, so its digests can never
 * be taken for "unchanged" (the first run after a change of format sends
 * everyone; the old keys expire on their own). 1: SHA-256 prefixes of the
 * same texts; 2: a hash of their UTF-16 code units; 3: stamp-hash.ts's hash of
 * their UTF-8 bytes.
 */
export const SENT_STATE_FORMAT = 3;

/** 35 days: a monthly re-import still finds its state; a scope no run uses goes away on its own. */
export const SENT_STATE_TTL_SECONDS = 35 * 86_400;
/** A new layout aims at this many people a bucket… */
const PEOPLE_PER_BUCKET = 64;
/** …and a run with more than this many a bucket moves the state to a wider one. */
const GROW_ABOVE = 100;
/** 262,144 buckets: 16.7M people at 64 a bucket; beyond, buckets grow past a listpack and cost more. */
const MAX_BITS = 18;
/**
 * People a comparing run asks about in one script call: a bucket's people
 * share one key argument and one HMGET, and at this many a call most buckets
 * of a large state come up more than once (per-person key arguments were ~7%
 * of a re-import's main thread in ioredis's command building).
 */
const COMPARE_AT_ONCE = 8192;
/** People (or keys) a script call takes. */
const AT_ONCE = 2048;
/** Stamps a first or full run gathers before writing them: 2 MB, so that a large file's state never sits in memory whole. */
const FLUSH_AT = 131_072;

// The scripts take every key in KEYS, all under the scope's hash tag: one
// Cluster slot, so they run on a Cluster as on a single Redis.

// People's fields and digests go as one string of 16 bytes a person: thousands
// of small arguments cost the client more than the script costs Redis.

/**
 * KEYS: buckets; ARGV[1]: field and digest of each person, bucket after
 * bucket; ARGV[2]: how many people of ARGV[1] go to each key, two bytes each
 * (big-endian). One HMGET a bucket (of up to 256 people, as Lua's unpack has
 * a limit), and one more for those whose digest differs, asking their
 * first-rows field (the last byte complemented); one character a person, in
 * that order: 1 the same digest, 2 the digest of their first rows alone when
 * last sent (a person of several rows whose first rows did not change), 0 otherwise.
 */
const COMPARE_BUCKETS = `
local same = {}
local people, counts = ARGV[1], ARGV[2]
local at = 0
for i = 1, #KEYS do
  local hi, lo = string.byte(counts, 2 * i - 1, 2 * i)
  local left = hi * 256 + lo
  while left > 0 do
    local n = math.min(left, 256)
    local fields = {}
    for j = 1, n do
      fields[j] = string.sub(people, at + (j - 1) * 16 + 1, at + (j - 1) * 16 + 8)
    end
    local digests = redis.call('HMGET', KEYS[i], unpack(fields))
    local missed, firsts = {}, {}
    for j = 1, n do
      local digest = string.sub(people, at + (j - 1) * 16 + 9, at + j * 16)
      if digests[j] == digest then
        same[#same + 1] = '1'
      else
        same[#same + 1] = '0'
        missed[#missed + 1] = j
        firsts[#firsts + 1] = string.sub(fields[j], 1, 7) .. string.char(255 - string.byte(fields[j], 8))
      end
    end
    if #missed > 0 then
      local earlier = redis.call('HMGET', KEYS[i], unpack(firsts))
      local base = #same - n
      for k = 1, #missed do
        local j = missed[k]
        if earlier[k] == string.sub(people, at + (j - 1) * 16 + 9, at + j * 16) then same[base + j] = '2' end
      end
    end
    at = at + n * 16
    left = left - n
  end
end
return table.concat(same)`;

/** KEYS[i]: person i's bucket; ARGV[1]: seconds to live; ARGV[2]: field and digest of each person. */
const RECORD = `
local renewed = {}
local people = ARGV[2]
for i = 1, #KEYS do
  local at = (i - 1) * 16
  redis.call('HSET', KEYS[i], string.sub(people, at + 1, at + 8), string.sub(people, at + 9, at + 16))
  if not renewed[KEYS[i]] then
    renewed[KEYS[i]] = true
    redis.call('EXPIRE', KEYS[i], ARGV[1])
  end
end
return #KEYS`;

/**
 * KEYS: buckets; ARGV[1]: seconds to live; ARGV[2]: field and digest of each
 * person, bucket after bucket, in the order they were accepted; ARGV[2 + i]:
 * how many of them go to KEYS[i]. HSET takes a later pair of one field last,
 * so a person sent again ends with the digest of what was sent last.
 */
const RECORD_BUCKETS = `
local ttl, people = ARGV[1], ARGV[2]
local at = 0
for i = 1, #KEYS do
  local n = tonumber(ARGV[i + 2])
  while n > 0 do
    local m = math.min(n, 256)
    local fields = {}
    for j = 1, m do
      fields[2 * j - 1] = string.sub(people, at + 1, at + 8)
      fields[2 * j] = string.sub(people, at + 9, at + 16)
      at = at + 16
    end
    redis.call('HSET', KEYS[i], unpack(fields))
    n = n - m
  end
  redis.call('EXPIRE', KEYS[i], ttl)
end
return #KEYS`;

/** KEYS: buckets; ARGV[1]: seconds to live. */
const RENEW = `
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[1]) end
return #KEYS`;

/** Which of a run's people were compared with what earlier runs sent. */
export type ChangeState = "compared" | "first" | "full" | "unavailable";

/**
 * What the sieve says of one person: send them; unchanged since the last
 * run; or their version is what their first rows alone gave when last sent
 * (a person of several rows whose later rows are still to come).
 */
export type SieveVerdict = "send" | "unchanged" | "firstRowsUnchanged";

/**
 * One person's place in the state and the digest of what is sent, as four
 * 32-bit words: the field (two words, the first of which picks the bucket),
 * then the digest (two words); for a person merged from several rows, two
 * more: the digest of their first row's version (FIRST_ROWS). Kept on the
 * person's batch entry until the service accepts it (BatchEntry.stamp).
 */
export type SentStamp = Uint32Array;

/** A person on the way to a batch, with the population its request carries. */
export interface PendingPerson {
  population: string | null;
  entry: BatchEntry;
  /** The identifier's value (map-row.ts identifierKey), when the read phase handed it on: saves parsing the person. */
  key?: string | undefined;
  /** For a version merged from several rows: the JSON of the person's first row alone, as it was batched. */
  first?: string | undefined;
}

/** The token as it may appear in a key: a hash, never the token itself. */
export function tokenFingerprint(token: string): string {
  return hash("sha256", `recruit-sync sent-state token\n${token}`, "hex").slice(0, 16);
}

/**
 * The definition without what does not change what is sent to whom: its
 * name and description, the batch size, the source's reading options (a
 * person decoded differently differs in its digest anyway) and the key that
 * turns change-only sending off.
 */
export function mappingFingerprint(def: ImportJobDefinition): string {
  const { name: _n, description: _d, batchSize: _b, source: _s, changesOnly: _c, ...mapping } = def;
  return hashValue(mapping);
}

/** The hash that names one state: service, token fingerprint, study, population, identifier, mapping. */
export function sentStateScope(
  service: { baseUrl: string; tokenFingerprint: string },
  def: ImportJobDefinition,
): string {
  return hashValue({
    format: SENT_STATE_FORMAT,
    service: service.baseUrl.replace(/\/+$/, ""),
    token: service.tokenFingerprint,
    studyId: def.target.studyId,
    population: def.target.population ?? null,
    identifier: def.target.identifier,
    mapping: mappingFingerprint(def),
  }).slice(0, 32);
}

/** Seeds of the two hashes of a stamp, so that the field and the digest of one text differ. */
const WHO_SEED = 0x5eed0001;
const WHAT_SEED = 0x5eed0002;

/** The person's stamp; undefined only for a person without identifier, which validation never lets through. */
export function stampOf(pending: PendingPerson, identifier: string): SentStamp | undefined {
  const key = pending.key ?? identifierKey(JSON.parse(pending.entry.person) as ImportPerson, identifier);
  if (key === undefined) return undefined;
  const stamp = new Uint32Array(pending.first === undefined ? 4 : 6);
  hash64Pair(pending.population ?? "", key, WHO_SEED, stamp, 0);
  hash64(pending.entry.person, WHAT_SEED, stamp, 2);
  if (pending.first !== undefined) hash64(pending.first, WHAT_SEED, stamp, 4);
  return stamp;
}

/**
 * The pair a person merged from several rows also leaves: their field with
 * its last byte complemented (the same bucket, as COMPARE_BUCKETS asks it)
 * and the digest of their first row's version. Undefined for a person of one row.
 */
export function firstRowsStamp(stamp: SentStamp): SentStamp | undefined {
  if (stamp.length < 6) return undefined;
  return Uint32Array.of(
    stamp[0] as number,
    ((stamp[1] as number) ^ 0xff) >>> 0,
    stamp[4] as number,
    stamp[5] as number,
  );
}

/** Each stamp, and after it its first-rows pair when it has one: the pairs a write leaves. */
function withFirstRows(stamps: readonly SentStamp[]): SentStamp[] {
  const out: SentStamp[] = [];
  for (const st of stamps) {
    out.push(st);
    const first = firstRowsStamp(st);
    if (first) out.push(first);
  }
  return out;
}

/** Field and digest of each stamp, 16 bytes a person, as the scripts take them. */
function packed(list: readonly SentStamp[]): Buffer {
  const out = Buffer.allocUnsafe(list.length * 16);
  for (let i = 0; i < list.length; i++) {
    const st = list[i] as SentStamp;
    const at = i * 16;
    out.writeUInt32BE(st[0] as number, at);
    out.writeUInt32BE(st[1] as number, at + 4);
    out.writeUInt32BE(st[2] as number, at + 8);
    out.writeUInt32BE(st[3] as number, at + 12);
  }
  return out;
}

/** The bucket of `bits` a stamp's first word picks: its top bits. */
function bucketOf(stamp: SentStamp, bits: number): number {
  return bits === 0 ? 0 : (stamp[0] as number) >>> (32 - bits);
}

/**
 * Stamps ordered by bucket, as COMPARE_BUCKETS takes them: the buckets met,
 * how many stamps each (two bytes each), the stamps packed in that order, and
 * for each place in that order the index of its stamp in `stamps`.
 */
function groupByBucket(
  stamps: readonly SentStamp[],
  bits: number,
): { buckets: number[]; counts: Buffer; packed: Buffer; order: number[] } {
  const of = stamps.map((st) => bucketOf(st, bits));
  const order = stamps.map((_st, i) => i).sort((a, b) => (of[a] as number) - (of[b] as number) || a - b);
  const buckets: number[] = [];
  const sizes: number[] = [];
  for (const i of order) {
    const b = of[i] as number;
    if (buckets.at(-1) === b) sizes[sizes.length - 1] = (sizes.at(-1) as number) + 1;
    else {
      buckets.push(b);
      sizes.push(1);
    }
  }
  const counts = Buffer.allocUnsafe(sizes.length * 2);
  for (let k = 0; k < sizes.length; k++) counts.writeUInt16BE(sizes[k] as number, k * 2);
  return { buckets, counts, packed: packed(order.map((i) => stamps[i] as SentStamp)), order };
}

/** Stamps in the order they were recorded, 16 bytes a person in slabs that never move. */
export class StampLog {
  static readonly SLAB_PEOPLE = 16_384;
  readonly #slabs: Uint32Array[] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  /** The stamp's pair, and its first-rows pair when it has one (firstRowsStamp). */
  push(stamp: SentStamp): void {
    this.#pushPair(stamp[0] as number, stamp[1] as number, stamp[2] as number, stamp[3] as number);
    if (stamp.length >= 6)
      this.#pushPair(
        stamp[0] as number,
        ((stamp[1] as number) ^ 0xff) >>> 0,
        stamp[4] as number,
        stamp[5] as number,
      );
  }

  #pushPair(w0: number, w1: number, w2: number, w3: number): void {
    const at = this.#length % StampLog.SLAB_PEOPLE;
    if (at === 0) this.#slabs.push(new Uint32Array(StampLog.SLAB_PEOPLE * 4));
    const slab = this.#slabs.at(-1) as Uint32Array;
    slab[at * 4] = w0;
    slab[at * 4 + 1] = w1;
    slab[at * 4 + 2] = w2;
    slab[at * 4 + 3] = w3;
    this.#length++;
  }

  /** A log of the stamps gathered so far, this one left empty: what records add meanwhile stays here. */
  detach(): StampLog {
    const out = new StampLog();
    out.#slabs.push(...this.#slabs.splice(0));
    out.#length = this.#length;
    this.#length = 0;
    return out;
  }

  /** Word `w` (0–3) of the i-th stamp. */
  word(i: number, w: number): number {
    const slab = this.#slabs[Math.floor(i / StampLog.SLAB_PEOPLE)] as Uint32Array;
    return slab[(i % StampLog.SLAB_PEOPLE) * 4 + w] as number;
  }

  /**
   * The stamps grouped by bucket of `bits`, each group in the order recorded,
   * a part of up to `atOnce` people (a bucket is never split between parts):
   * the buckets, how many stamps each, and the stamps packed as the scripts take them.
   */
  *byBucket(
    bits: number,
    atOnce: number,
  ): Generator<{ buckets: number[]; counts: number[]; packed: Buffer }> {
    const n = this.#length;
    const bucketOf = (i: number) => (bits === 0 ? 0 : this.word(i, 0) >>> (32 - bits));
    const starts = new Uint32Array(2 ** bits + 1);
    for (let i = 0; i < n; i++) (starts[bucketOf(i) + 1] as number)++;
    for (let b = 1; b < starts.length; b++) starts[b] = (starts[b] as number) + (starts[b - 1] as number);
    const order = new Uint32Array(n);
    const next = starts.slice(0, -1);
    for (let i = 0; i < n; i++) {
      const b = bucketOf(i);
      order[next[b] as number] = i;
      next[b] = (next[b] as number) + 1;
    }
    let b = 0;
    while (b < 2 ** bits) {
      const buckets: number[] = [];
      const counts: number[] = [];
      const from = starts[b] as number;
      let to = from;
      while (b < 2 ** bits && (to === from || (starts[b + 1] as number) - from <= atOnce)) {
        const count = (starts[b + 1] as number) - (starts[b] as number);
        if (count > 0) {
          buckets.push(b);
          counts.push(count);
        }
        to = starts[b + 1] as number;
        b++;
      }
      if (buckets.length === 0) continue;
      const packed = Buffer.allocUnsafe((to - from) * 16);
      for (let k = from; k < to; k++) {
        const i = order[k] as number;
        for (let w = 0; w < 4; w++) packed.writeUInt32BE(this.word(i, w), (k - from) * 16 + w * 4);
      }
      yield { buckets, counts, packed };
    }
  }
}

/** The fewest bits whose buckets hold PEOPLE_PER_BUCKET of `people` on average. */
export function layoutBits(people: number): number {
  let bits = 0;
  while (bits < MAX_BITS && people / 2 ** bits > PEOPLE_PER_BUCKET) bits++;
  return bits;
}

export interface SentStateOptions {
  redis: Redis | Cluster;
  /** The configured key prefix; the state adds `:sent:{<scope>}:…`. */
  prefix: string;
  /** sentStateScope of the run's service and definition. */
  scope: string;
  /** The job's target.identifier. */
  identifier: string;
  /** full: send everyone (and record them); compare: send the changed and the new. */
  mode: "compare" | "full";
  /** At most how many people the run holds (valid rows), for the layout. */
  people: number;
  /** A dry run reads and never writes. */
  readOnly: boolean;
  ttlSeconds?: number;
  /** Stamps a first or full run gathers before writing them (FLUSH_AT; smaller in tests). */
  flushAt?: number;
}

export interface SentState {
  /** compared, first (nothing earlier for this scope) or full. */
  readonly changeState: ChangeState;
  /**
   * Stamps each person and says which to send: in compare mode the ones whose
   * digest differs from the state's or who are not in it (and which of those
   * are the first rows of a person of several rows, unchanged); everyone otherwise.
   */
  sieve(people: readonly PendingPerson[]): Promise<SieveVerdict[]>;
  /** How many people sieve is best given at once: as many as a comparing run asks Redis about in one call. */
  readonly sieveAtOnce: number;
  /**
   * Records people the service accepted (stamped by sieve): at once when the
   * run compares; gathered and written in parts otherwise (FLUSH_AT, finish).
   */
  record(entries: readonly BatchEntry[]): Promise<void>;
  /** People of batches an earlier attempt of this run finished (the ledger's): gathered as if sent now, when the run gathers its stamps. */
  recordResumed(entries: readonly BatchEntry[]): void;
  /** After a run that failed or stopped: writes the stamps gathered so far, without the layout. */
  keep(): Promise<void>;
  /** After a run that completed: the layout in meta, every bucket's expiry renewed, an old layout removed. */
  finish(): Promise<void>;
}

/** Opens the state of one scope for one run. */
export async function openSentState(options: SentStateOptions): Promise<SentState> {
  const { redis } = options;
  const base = `${options.prefix}:sent:{${options.scope}}`;
  const meta = `${base}:meta`;
  const ttl = options.ttlSeconds ?? SENT_STATE_TTL_SECONDS;
  const readBits = storedBits(await redis.hget(meta, "bits"));
  const writeBits =
    readBits !== undefined && options.people / 2 ** readBits <= GROW_ABOVE
      ? readBits
      : Math.max(readBits ?? 0, layoutBits(options.people));
  // Moving to a wider layout: the unchanged are copied as they are met, the old layout goes at finish.
  const moving = readBits !== undefined && writeBits !== readBits && !options.readOnly;
  const compare = options.mode === "compare" && readBits !== undefined;
  // Without a layout to compare with, nothing written before finish can be read: gather the stamps, write them in parts.
  const log = compare || options.readOnly ? undefined : new StampLog();
  // Writes what has gathered; records that come meanwhile gather for the next flush. Two flushes
  // of one person (sent again) keep the later stamp: the second starts after the first has written.
  let flushing: Promise<void> = Promise.resolve();
  const flush = (stamps: StampLog) => {
    const previous = flushing;
    flushing = (async () => {
      await previous;
      for (const part of stamps.byBucket(writeBits, AT_ONCE)) {
        const keys = part.buckets.map((b) => bucketName(writeBits, b));
        await redis.eval(RECORD_BUCKETS, keys.length, ...keys, ttl, part.packed, ...part.counts);
      }
    })();
    return flushing;
  };
  // A bucket's key is made once a run, not once for each of its people.
  const names = new Map<number, string[]>();
  const bucketName = (bits: number, bucket: number): string => {
    const list = names.get(bits) ?? [];
    names.set(bits, list);
    list[bucket] ??= `${base}:b${bits}:${bucket.toString(16)}`;
    return list[bucket];
  };
  const bucketKey = (bits: number, stamp: SentStamp) => bucketName(bits, bucketOf(stamp, bits));

  // One script call for up to AT_ONCE people: a command each through ioredis cost ~30 µs a person (2.9 s of a 100k re-import).
  const write = async (list: readonly SentStamp[]) => {
    for (let i = 0; i < list.length; i += AT_ONCE) {
      const part = list.slice(i, i + AT_ONCE);
      await redis.eval(RECORD, part.length, ...part.map((s) => bucketKey(writeBits, s)), ttl, packed(part));
    }
  };

  return {
    changeState: options.mode === "full" ? "full" : compare ? "compared" : "first",
    sieveAtOnce: compare ? COMPARE_AT_ONCE : AT_ONCE,

    async sieve(people) {
      const send = new Array<SieveVerdict>(people.length).fill("send");
      const stamped: (SentStamp | undefined)[] = people.map((p) => {
        const s = stampOf(p, options.identifier);
        if (s) p.entry.stamp = s;
        return s;
      });
      if (!compare) return send;
      const asked = stamped.flatMap((st, i) => (st ? [i] : []));
      const unchanged: SentStamp[] = [];
      for (let k = 0; k < asked.length; k += COMPARE_AT_ONCE) {
        const part = asked.slice(k, k + COMPARE_AT_ONCE);
        const group = groupByBucket(
          part.map((i) => stamped[i] as SentStamp),
          readBits,
        );
        const keys = group.buckets.map((b) => bucketName(readBits, b));
        const same = String(
          await redis.eval(COMPARE_BUCKETS, keys.length, ...keys, group.packed, group.counts),
        );
        group.order.forEach((n, at) => {
          const i = part[n] as number;
          if (same[at] === "2") send[i] = "firstRowsUnchanged";
          if (same[at] !== "1") return;
          send[i] = "unchanged";
          unchanged.push(stamped[i] as SentStamp);
        });
      }
      if (moving) await write(withFirstRows(unchanged));
      return send;
    },

    async record(entries) {
      if (options.readOnly) return;
      if (log) {
        for (const e of entries) if (e.stamp) log.push(e.stamp);
        if (log.length >= (options.flushAt ?? FLUSH_AT)) await flush(log.detach());
        return;
      }
      const list: SentStamp[] = [];
      for (const e of entries) {
        if (e.stamp) list.push(e.stamp);
      }
      await write(withFirstRows(list));
    },

    recordResumed(entries) {
      if (log) for (const e of entries) if (e.stamp) log.push(e.stamp);
    },

    async keep() {
      if (log) await flush(log.detach());
    },

    async finish() {
      if (options.readOnly) return;
      if (log) await flush(log.detach());
      await redis
        .multi()
        .hset(meta, "bits", String(writeBits), "at", new Date().toISOString())
        .expire(meta, ttl)
        .exec();
      // Buckets of a layout found at the start may hold people this run did not write: their
      // expiry moves with the run. Without one, every bucket was written just now, with its expiry.
      const buckets =
        readBits === undefined
          ? []
          : Array.from({ length: 2 ** writeBits }, (_v, b) => `${base}:b${writeBits}:${b.toString(16)}`);
      for (let i = 0; i < buckets.length; i += AT_ONCE) {
        const part = buckets.slice(i, i + AT_ONCE);
        await redis.eval(RENEW, part.length, ...part, ttl);
      }
      if (moving && readBits !== undefined) {
        const old = Array.from(
          { length: 2 ** readBits },
          (_v, b) => `${base}:b${readBits}:${b.toString(16)}`,
        );
        for (let i = 0; i < old.length; i += 1000) await redis.unlink(...old.slice(i, i + 1000));
      }
    },
  };
}

/** The layout meta names, or undefined when there is no state (or it is not one of ours). */
function storedBits(text: string | null): number | undefined {
  if (text === null || !/^\d{1,2}$/.test(text)) return undefined;
  const bits = Number(text);
  return bits <= MAX_BITS ? bits : undefined;
}
