import { hash } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import type { ImportJobDefinition } from "../config/import-job.ts";
import type { BatchEntry } from "./batch.ts";
import { hashValue } from "./file-hash.ts";
import {
  bucketOf,
  groupByBucket,
  type PendingPerson,
  packed,
  type SentStamp,
  StampLog,
  stampOf,
  withFirstRows,
} from "./sent-stamps.ts";
import { COMPARE_BUCKETS, RECORD, RECORD_BUCKETS, RENEW } from "./sent-state-scripts.ts";

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
 *   measured at 100,000 people (docs/reference/imports.md). A person sent merged from
 *   several rows has a second pair in the same bucket: the field with its last
 *   byte complemented, and the digest of the version of their first row alone
 *   (firstRowsStamp, sent-stamps.ts). A later run whose first row of that person gives that digest
 *   holds the person back until their later rows are merged, instead of
 *   sending the partial version and then the merged one (merge-phase.ts).
 *
 * A run that compares writes the people the service accepted as their
 * answers come. A first or full run gathers its stamps (StampLog, 16 bytes a
 * person) and writes them bucket by bucket, each time FLUSH_AT have gathered
 * and at `finish`: its writes could not be read before `finish` wrote the
 * layout anyway, and one HSET of many people of a bucket costs Redis and the
 * client a small part of as many one-person writes (2.8 s of Redis's time for
 * 300,000 people, docs/engineering/performance-log.md). A first run that fails may not have
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
/**
 * People a run that does not compare (a first or full run) gives the sieve at
 * once: its verdict needs no Redis, so waiting for more only holds them on the
 * heap — long enough, at 2,048, to outlive young collections by the thousand.
 */
const STAMP_AT_ONCE = 256;
/** Stamps a first or full run gathers before writing them: 2 MB, so that a large file's state never sits in memory whole. */
const FLUSH_AT = 131_072;

/** Which of a run's people were compared with what earlier runs sent. */
export type ChangeState = "compared" | "first" | "full" | "unavailable";

/**
 * What the sieve says of one person: send them; unchanged since the last
 * run; or their version is what their first rows alone gave when last sent
 * (a person of several rows whose later rows are still to come).
 */
export type SieveVerdict = "send" | "unchanged" | "firstRowsUnchanged";

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
  const base = `${options.prefix}:sent:{${options.scope}}`;
  const readBits = storedBits(await options.redis.hget(`${base}:meta`, "bits"));
  return new RedisSentState(options, base, readBits);
}

/** The state of one scope in Redis, as one run reads and writes it. */
class RedisSentState implements SentState {
  readonly changeState: ChangeState;
  readonly sieveAtOnce: number;
  readonly #options: SentStateOptions;
  readonly #redis: Redis | Cluster;
  readonly #base: string;
  readonly #ttl: number;
  /** The layout found at the start (undefined: none), and the one this run writes. */
  readonly #readBits: number | undefined;
  readonly #writeBits: number;
  /** Moving to a wider layout: the unchanged are copied as they are met, the old layout goes at finish. */
  readonly #moving: boolean;
  readonly #compare: boolean;
  /** Without a layout to compare with, nothing written before finish can be read: the stamps gather here, written in parts. */
  readonly #log: StampLog | undefined;
  /**
   * Writes of what has gathered, one after another; records that come
   * meanwhile gather for the next flush. Two flushes of one person (sent
   * again) keep the later stamp: the second starts after the first has written.
   */
  #flushing: Promise<void> = Promise.resolve();
  /** A bucket's key is made once a run, not once for each of its people. */
  readonly #names = new Map<number, string[]>();

  constructor(options: SentStateOptions, base: string, readBits: number | undefined) {
    this.#options = options;
    this.#redis = options.redis;
    this.#base = base;
    this.#ttl = options.ttlSeconds ?? SENT_STATE_TTL_SECONDS;
    this.#readBits = readBits;
    this.#writeBits =
      readBits !== undefined && options.people / 2 ** readBits <= GROW_ABOVE
        ? readBits
        : Math.max(readBits ?? 0, layoutBits(options.people));
    this.#moving = readBits !== undefined && this.#writeBits !== readBits && !options.readOnly;
    this.#compare = options.mode === "compare" && readBits !== undefined;
    this.#log = this.#compare || options.readOnly ? undefined : new StampLog();
    this.changeState = options.mode === "full" ? "full" : this.#compare ? "compared" : "first";
    this.sieveAtOnce = this.#compare ? COMPARE_AT_ONCE : STAMP_AT_ONCE;
  }

  async sieve(people: readonly PendingPerson[]): Promise<SieveVerdict[]> {
    const send = new Array<SieveVerdict>(people.length).fill("send");
    const stamped: (SentStamp | undefined)[] = people.map((p) => {
      const s = stampOf(p, this.#options.identifier);
      if (s) p.entry.stamp = s;
      return s;
    });
    const readBits = this.#readBits;
    if (!this.#compare || readBits === undefined) return send;
    const asked = stamped.flatMap((st, i) => (st ? [i] : []));
    const unchanged: SentStamp[] = [];
    for (let k = 0; k < asked.length; k += COMPARE_AT_ONCE) {
      const part = asked.slice(k, k + COMPARE_AT_ONCE);
      const group = groupByBucket(
        part.map((i) => stamped[i] as SentStamp),
        readBits,
      );
      const keys = group.buckets.map((b) => this.#bucketName(readBits, b));
      const same = String(
        await this.#redis.eval(COMPARE_BUCKETS, keys.length, ...keys, group.packed, group.counts),
      );
      group.order.forEach((n, at) => {
        const i = part[n] as number;
        if (same[at] === "2") send[i] = "firstRowsUnchanged";
        if (same[at] !== "1") return;
        send[i] = "unchanged";
        unchanged.push(stamped[i] as SentStamp);
      });
    }
    if (this.#moving) await this.#write(withFirstRows(unchanged));
    return send;
  }

  async record(entries: readonly BatchEntry[]): Promise<void> {
    if (this.#options.readOnly) return;
    const log = this.#log;
    if (log) {
      for (const e of entries) if (e.stamp) log.push(e.stamp);
      if (log.length >= (this.#options.flushAt ?? FLUSH_AT)) {
        // Written behind the batch's answer, not before it counts: nothing reads a first run's
        // stamps before finish, and a failed run's retry records what the ledger resumes. Held
        // up, the batch kept its request slot for the whole write. At most one flush waits
        // behind another, and the previous one's failure stops the run here.
        const previous = this.#flushing;
        this.#flush(log.detach());
        await previous;
      }
      return;
    }
    const list: SentStamp[] = [];
    for (const e of entries) {
      if (e.stamp) list.push(e.stamp);
    }
    await this.#write(withFirstRows(list));
  }

  recordResumed(entries: readonly BatchEntry[]): void {
    const log = this.#log;
    if (log) for (const e of entries) if (e.stamp) log.push(e.stamp);
  }

  async keep(): Promise<void> {
    if (this.#log) await this.#flush(this.#log.detach());
  }

  async finish(): Promise<void> {
    if (this.#options.readOnly) return;
    if (this.#log) await this.#flush(this.#log.detach());
    const base = this.#base;
    const ttl = this.#ttl;
    const writeBits = this.#writeBits;
    const readBits = this.#readBits;
    await this.#redis
      .multi()
      .hset(`${base}:meta`, "bits", String(writeBits), "at", new Date().toISOString())
      .expire(`${base}:meta`, ttl)
      .exec();
    // Buckets of a layout found at the start may hold people this run did not write: their
    // expiry moves with the run. Without one, every bucket was written just now, with its expiry.
    const buckets = readBits === undefined ? [] : this.#allBuckets(writeBits);
    for (let i = 0; i < buckets.length; i += AT_ONCE) {
      const part = buckets.slice(i, i + AT_ONCE);
      await this.#redis.eval(RENEW, part.length, ...part, ttl);
    }
    if (this.#moving && readBits !== undefined) {
      const old = this.#allBuckets(readBits);
      for (let i = 0; i < old.length; i += 1000) await this.#redis.unlink(...old.slice(i, i + 1000));
    }
  }

  #allBuckets(bits: number): string[] {
    return Array.from({ length: 2 ** bits }, (_v, b) => `${this.#base}:b${bits}:${b.toString(16)}`);
  }

  #flush(stamps: StampLog): Promise<void> {
    const previous = this.#flushing;
    const writeBits = this.#writeBits;
    this.#flushing = (async () => {
      await previous;
      // Every part goes at once, in order on the one connection: the next part is packed while
      // Redis writes the one before, instead of each waiting for the last one's answer.
      const writes: Promise<unknown>[] = [];
      for (const part of stamps.byBucket(writeBits, AT_ONCE)) {
        const keys = part.buckets.map((b) => this.#bucketName(writeBits, b));
        writes.push(
          this.#redis.eval(RECORD_BUCKETS, keys.length, ...keys, this.#ttl, part.packed, ...part.counts),
        );
      }
      await Promise.all(writes);
    })();
    // A failure surfaces where the chain is awaited (the next flush, keep, finish), not as unhandled.
    this.#flushing.catch(() => {});
    return this.#flushing;
  }

  #bucketName(bits: number, bucket: number): string {
    const list = this.#names.get(bits) ?? [];
    this.#names.set(bits, list);
    list[bucket] ??= `${this.#base}:b${bits}:${bucket.toString(16)}`;
    return list[bucket];
  }

  /** One script call for up to AT_ONCE people: a command each through ioredis cost ~30 µs a person (2.9 s of a 100k re-import). */
  async #write(list: readonly SentStamp[]): Promise<void> {
    for (let i = 0; i < list.length; i += AT_ONCE) {
      const part = list.slice(i, i + AT_ONCE);
      const keys = part.map((s) => this.#bucketName(this.#writeBits, bucketOf(s, this.#writeBits)));
      await this.#redis.eval(RECORD, part.length, ...keys, this.#ttl, packed(part));
    }
  }
}

/** The layout meta names, or undefined when there is no state (or it is not one of ours). */
function storedBits(text: string | null): number | undefined {
  if (text === null || !/^\d{1,2}$/.test(text)) return undefined;
  const bits = Number(text);
  return bits <= MAX_BITS ? bits : undefined;
}
