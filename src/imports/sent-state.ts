import { hash } from "node:crypto";
import type { ChainableCommander, Cluster, Redis } from "ioredis";
import type { ImportPerson } from "../api/index.ts";
import type { ImportJobDefinition } from "../config/import-job.ts";
import type { BatchEntry } from "./batch.ts";
import { hashValue } from "./file-hash.ts";
import { identifierKey } from "./map-row.ts";

/**
 * What the last successful runs sent, person by person, so that a re-import
 * sends only the people whose mapped data changed, and the new ones.
 *
 * Layout in Redis, all under one hash tag (one Cluster slot per scope):
 *
 * - `<prefix>:sent:{<scope>}:meta` — a hash: `bits`, the layout the buckets use;
 *   `at`, when a run last finished.
 * - `<prefix>:sent:{<scope>}:b<bits>:<bucket>` — a hash per bucket: field, 8
 *   bytes of SHA-256 of (population, identifier); value, 8 bytes of SHA-256 of
 *   the person's JSON exactly as it was sent. The bucket is the hash's first
 *   `bits` bits, chosen so that a bucket holds ~64 people: small hashes stay
 *   listpacks, ~20 bytes a person instead of ~80 (docs/imports.md has the
 *   measured figure).
 *
 * The scope (sentStateScope) names the service, a fingerprint of the token,
 * the study, the population mapping, the identifier and the mapping: a change
 * of any of them starts from nothing, so everyone is sent. Every key expires
 * SENT_STATE_TTL_SECONDS after the last write or finished run of its scope.
 */

/** 35 days: a monthly re-import still finds its state; a scope no run uses goes away on its own. */
export const SENT_STATE_TTL_SECONDS = 35 * 86_400;
/** A new layout aims at this many people a bucket… */
const PEOPLE_PER_BUCKET = 64;
/** …and a run with more than this many a bucket moves the state to a wider one. */
const GROW_ABOVE = 100;
/** 262,144 buckets: 16.7M people at 64 a bucket; beyond, buckets grow past a listpack and cost more. */
const MAX_BITS = 18;

/** Which of a run's people were compared with what earlier runs sent. */
export type ChangeState = "compared" | "first" | "full" | "unavailable";

/** One person's place in the state: bucket, field and the digest of what is sent. */
export interface SentStamp {
  bucket: number;
  field: Buffer;
  digest: Buffer;
}

/** A person on the way to a batch, with the population its request carries. */
export interface PendingPerson {
  population: string | null;
  entry: BatchEntry;
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
    service: service.baseUrl.replace(/\/+$/, ""),
    token: service.tokenFingerprint,
    studyId: def.target.studyId,
    population: def.target.population ?? null,
    identifier: def.target.identifier,
    mapping: mappingFingerprint(def),
  }).slice(0, 32);
}

/** The person's stamp; undefined only for a person without identifier, which validation never lets through. */
export function stampOf(pending: PendingPerson, identifier: string): SentStamp | undefined {
  const key = identifierKey(JSON.parse(pending.entry.person) as ImportPerson, identifier);
  if (key === undefined) return undefined;
  const who = hash("sha256", `${pending.population ?? ""}\u0000${key}`, "buffer");
  return {
    bucket: who.readUInt32BE(0),
    field: who.subarray(4, 12),
    digest: hash("sha256", pending.entry.person, "buffer").subarray(0, 8),
  };
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
}

export interface SentState {
  /** compared, first (nothing earlier for this scope) or full. */
  readonly changeState: ChangeState;
  /**
   * Stamps each person and says which to send: in compare mode the ones whose
   * digest differs from the state's or who are not in it; everyone otherwise.
   */
  sieve(people: readonly PendingPerson[]): Promise<boolean[]>;
  /** Records people the service accepted (stamped by sieve). */
  record(entries: readonly BatchEntry[]): Promise<void>;
  /** After a run that completed: the layout in meta, every bucket's expiry renewed, an old layout removed. */
  finish(): Promise<void>;
}

const stamps = new WeakMap<BatchEntry, SentStamp>();

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
  const bucketKey = (bits: number, stamp: SentStamp) =>
    `${base}:b${bits}:${bits === 0 ? 0 : (stamp.bucket >>> (32 - bits)).toString(16)}`;

  const write = async (list: readonly SentStamp[]) => {
    if (list.length === 0) return;
    const byKey = new Map<string, Buffer[]>();
    for (const s of list) {
      const key = bucketKey(writeBits, s);
      const args = byKey.get(key);
      if (args) args.push(s.field, s.digest);
      else byKey.set(key, [s.field, s.digest]);
    }
    const pipeline = redis.pipeline();
    for (const [key, args] of byKey) pipeline.hset(key, ...args).expire(key, ttl);
    await execAll(pipeline);
  };

  return {
    changeState: options.mode === "full" ? "full" : compare ? "compared" : "first",

    async sieve(people) {
      const send = new Array<boolean>(people.length).fill(true);
      const stamped: (SentStamp | undefined)[] = people.map((p) => {
        const s = stampOf(p, options.identifier);
        if (s) stamps.set(p.entry, s);
        return s;
      });
      if (!compare) return send;
      const pipeline = redis.pipeline();
      const asked: number[] = [];
      stamped.forEach((s, i) => {
        if (!s) return;
        pipeline.hgetBuffer(bucketKey(readBits, s), s.field);
        asked.push(i);
      });
      const answers = await execAll(pipeline);
      const unchanged: SentStamp[] = [];
      asked.forEach((i, n) => {
        const seen = answers[n] as Buffer | null;
        const s = stamped[i] as SentStamp;
        if (seen?.equals(s.digest)) {
          send[i] = false;
          unchanged.push(s);
        }
      });
      if (moving) await write(unchanged);
      return send;
    },

    async record(entries) {
      if (options.readOnly) return;
      const list: SentStamp[] = [];
      for (const e of entries) {
        const s = stamps.get(e);
        if (s) list.push(s);
      }
      await write(list);
    },

    async finish() {
      if (options.readOnly) return;
      const pipeline = redis.pipeline();
      pipeline.hset(meta, "bits", String(writeBits), "at", new Date().toISOString()).expire(meta, ttl);
      for (let b = 0; b < 2 ** writeBits; b++)
        pipeline.expire(`${base}:b${writeBits}:${b.toString(16)}`, ttl);
      await execAll(pipeline);
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

/** Runs a pipeline; the first command's error, if any, is thrown. */
async function execAll(pipeline: ChainableCommander): Promise<unknown[]> {
  const results = (await pipeline.exec()) ?? [];
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
