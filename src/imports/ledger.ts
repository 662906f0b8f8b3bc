import type { Cluster, Redis } from "ioredis";
import { z } from "zod";
import type { ImportReport } from "./report.ts";
import { RowProblem } from "./row-problem.ts";

/** A finished batch: never sent again for the same file and definition. */
export const LedgerBatch = z.object({
  status: z.literal("done"),
  importIds: z.array(z.string()),
  imported: z.number().int().nonnegative(),
  /** Rows the service refused, so a resumed run can write them to its rejects file again. */
  rejected: z.array(z.object({ rows: z.array(z.number().int()), problems: z.array(RowProblem) })),
  duplicates: z.number().int().nonnegative(),
  at: z.string(),
});
export type LedgerBatch = z.infer<typeof LedgerBatch>;

/**
 * Which people a run numbered its batches over: every valid person of the
 * file (`all`), which the same file, definition and sizes always number
 * alike, or those left after comparing with the change state (`compared`),
 * which depends on what the state held when that run started.
 */
export const BatchNumbering = z.enum(["all", "compared"]);
export type BatchNumbering = z.infer<typeof BatchNumbering>;

export const LedgerRun = z.object({
  status: z.enum(["running", "done"]),
  file: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  /** The finished run's report, returned when the same file comes again. */
  report: z.unknown().optional(),
  /**
   * People in the first batch and in each later one, as decided at the
   * first run of the file: batches are numbered by these sizes, so a rerun
   * cuts the same batches whatever the quota looks like by then.
   */
  batching: z
    .object({
      first: z.number().int().positive(),
      rest: z.number().int().positive().optional(),
      probe: z.boolean().optional(),
    })
    .strict()
    .optional(),
  /**
   * How the batches recorded here were numbered (BatchNumbering), written before the first of
   * them; a record without it is read as its ledger's `unrecordedNumbering`.
   */
  numbered: BatchNumbering.optional(),
});
export type LedgerRun = z.infer<typeof LedgerRun>;

/** Progress of one file under one definition, batch by batch. */
export interface ImportLedger {
  readonly id: string;
  run(): Promise<LedgerRun | undefined>;
  /**
   * Marks the file running with its batches numbered as `numbering`, and returns the batches an
   * earlier attempt finished that this one skips by index: only those numbered `all`, and only
   * for a run that numbers `all` too. A run that compares skips none (which people fill its
   * batches depends on the change state at its start); one that numbers `all` after an attempt
   * that compared clears that attempt's batches and batch sizes, and numbers afresh.
   */
  start(file: string, numbering: BatchNumbering): Promise<Map<number, LedgerBatch>>;
  putBatch(index: number, batch: LedgerBatch): Promise<void>;
  /** Records the batch sizes, before the first batch of those sizes is sent. */
  setBatching(batching: NonNullable<LedgerRun["batching"]>): Promise<void>;
  /** Marks the file done, keeping the report to return when the same file comes again. */
  finish(report: ImportReport): Promise<void>;
  /** Forgets the file, so that it is imported again from the first batch. */
  clear(): Promise<void>;
}

export interface RedisLedgerOptions {
  /** One key per ledger, so a Cluster serves it as well as a single Redis. */
  redis: Redis | Cluster;
  /** Key prefix, e.g. the configured `recruit-sync`; the ledger adds `:import-ledger:…`. */
  prefix: string;
  fileHash: string;
  definitionHash: string;
  /** How long a ledger outlives its last write; default 90 days. */
  ttlSeconds?: number;
  /**
   * How the batches of a run record that does not say were numbered (written by a version before
   * `numbered`, or unreadable); default `all`. A change-only ledger says `compared`: such a record
   * may come from an attempt that compared, so its batches are not resumed by index.
   */
  unrecordedNumbering?: BatchNumbering;
}

function parseJson<T>(schema: z.ZodType<T>, text: string | null | undefined): T | undefined {
  if (text === null || text === undefined) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The ledger as one Redis hash per (file content, definition): field `run` and
 * one field `batch:<n>` per finished batch. A batch is recorded right after the
 * service accepts it, so a crash loses at most the batch in flight, which is
 * resent (imports match by identifier, so a resend converges).
 */
export function createRedisLedger(options: RedisLedgerOptions): ImportLedger {
  const { redis } = options;
  const id = `${options.fileHash.slice(0, 16)}:${options.definitionHash.slice(0, 16)}`;
  const key = `${options.prefix}:import-ledger:${id}`;
  const ttl = options.ttlSeconds ?? 90 * 24 * 3600;
  const unrecorded = options.unrecordedNumbering ?? "all";
  const batches = async () => {
    const all = await redis.hgetall(key);
    const out = new Map<number, LedgerBatch>();
    for (const [field, value] of Object.entries(all)) {
      if (!field.startsWith("batch:")) continue;
      const batch = parseJson(LedgerBatch, value);
      if (batch) out.set(Number(field.slice("batch:".length)), batch);
    }
    return out;
  };
  return {
    id,
    async run() {
      return parseJson(LedgerRun, await redis.hget(key, "run"));
    },
    async start(file, numbering) {
      const found = parseJson(LedgerRun, await redis.hget(key, "run"));
      // Batch n of an attempt that compared held other people than batch n of a run over everyone:
      // skipping it would leave people unsent. Its batches go, and so do its sizes, decided anew.
      const forget = numbering === "all" && (found?.numbered ?? unrecorded) !== "all";
      const existing = forget ? undefined : found;
      const run: LedgerRun = {
        status: "running",
        file,
        startedAt: existing?.startedAt ?? new Date().toISOString(),
        ...(existing?.batching ? { batching: existing.batching } : {}),
        numbered: numbering,
      };
      const write = redis.multi();
      if (forget) write.del(key);
      await write.hset(key, "run", JSON.stringify(run)).expire(key, ttl).exec();
      // Compared batches are never skipped: the people an earlier attempt had sent are unchanged now.
      return numbering === "all" ? await batches() : new Map<number, LedgerBatch>();
    },
    async putBatch(index, batch) {
      await redis.multi().hset(key, `batch:${index}`, JSON.stringify(batch)).expire(key, ttl).exec();
    },
    async setBatching(batching) {
      const run = parseJson(LedgerRun, await redis.hget(key, "run"));
      const next: LedgerRun = {
        status: run?.status ?? "running",
        file: run?.file ?? "",
        startedAt: run?.startedAt ?? new Date().toISOString(),
        batching,
        ...(run?.numbered ? { numbered: run.numbered } : {}),
      };
      await redis.multi().hset(key, "run", JSON.stringify(next)).expire(key, ttl).exec();
    },
    async finish(report) {
      const run = parseJson(LedgerRun, await redis.hget(key, "run"));
      const done: LedgerRun = {
        status: "done",
        file: run?.file ?? "",
        startedAt: run?.startedAt ?? new Date().toISOString(),
        finishedAt: new Date().toISOString(),
        report,
        ...(run?.batching ? { batching: run.batching } : {}),
        ...(run?.numbered ? { numbered: run.numbered } : {}),
      };
      await redis.multi().hset(key, "run", JSON.stringify(done)).expire(key, ttl).exec();
    },
    async clear() {
      await redis.del(key);
    },
  };
}

export interface OpenImportLedgerOptions {
  redis: Redis | Cluster;
  prefix: string;
  ttlSeconds?: number;
  fileHash: string;
  /** The definition and the service the run sends to, hashed (open-import.ts). */
  ledgerKey: string;
  /** Change-only sending that leaves the unchanged out (not `full`). */
  sendsChangedOnly: boolean;
  /** Import again a file the ledger says is done (`--force`). */
  force: boolean;
  /** Send everyone again (`--full`): a file done before is no reason to skip it. */
  full: boolean;
}

/**
 * The ledger of one run: which file, under which definition, to which
 * service. Returns it with the earlier run that finished this file, if one
 * did and the run is not asked to import it again.
 */
export async function openImportLedger(
  options: OpenImportLedgerOptions,
): Promise<{ ledger: ImportLedger; done: LedgerRun | undefined }> {
  const ledger = createRedisLedger({
    redis: options.redis,
    prefix: options.prefix,
    ...(options.ttlSeconds ? { ttlSeconds: options.ttlSeconds } : {}),
    fileHash: options.fileHash,
    definitionHash: options.ledgerKey,
    // A change-only ledger written before runs recorded their numbering may hold an attempt that compared.
    unrecordedNumbering: options.sendsChangedOnly ? "compared" : "all",
  });
  if (options.force) await ledger.clear();
  let previous = await ledger.run();
  if (options.full && previous?.status === "done") {
    await ledger.clear();
    previous = undefined;
  }
  return { ledger, done: previous?.status === "done" ? previous : undefined };
}
