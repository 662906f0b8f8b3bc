import path from "node:path";
import type { Logger } from "pino";
import { type ApiClient, NotFoundApiError } from "../api/index.ts";
import type { RuntimeConfig } from "../config/index.ts";
import { readJobFiles } from "../config/job-files.ts";
import { forgetSentState, forgetUnverifiedMarks } from "../imports/index.ts";
import type { RedisConnection } from "../runtime/redis-connection.ts";
import { parseWarehouseUrl } from "../sinks/warehouse-url.ts";
import { forgetInDuckDb } from "./duckdb-warehouse.ts";
import { FORGET_TABLES } from "./forget-tables.ts";
import { forgetInPostgres } from "./postgres-warehouse.ts";
import { type ForgetReceipt, RECEIPTS_FOLDER, writeReceipt } from "./receipt.ts";
import { type FileRemoval, scrubFolder } from "./scrub-files.ts";
import { subjectHashes, type Who, whoFrom } from "./who.ts";

export interface ForgetOptions {
  config: RuntimeConfig;
  /** Emails and phone numbers, as the person gave them. */
  identifiers: readonly string[];
  /** Warehouses beyond the configured one (an export's `--warehouse`). */
  warehouses?: readonly string[];
  /** Redis for the change-only state and the marks; without it they are skipped, and the receipt says so. */
  redis?: RedisConnection | undefined;
  /** `--opt-out`: opts them out in the service through this client (its governor in front). */
  optOutClient?: ApiClient | undefined;
  logger?: Logger | undefined;
}

/** Every population a job could have sent a person with, and none: the change-only state keys people by it. */
async function populationsOf(jobsDir: string): Promise<(string | null)[]> {
  const found = new Set<string | null>([null]);
  const files = await readJobFiles(jobsDir).catch(() => []);
  for (const f of files) {
    if (!f.ok || f.definition.kind !== "import") continue;
    const spec = f.definition.target.population;
    if (!spec) continue;
    if ("id" in spec) found.add(spec.id);
    else {
      for (const id of Object.values(spec.values)) found.add(id);
      if (spec.default) found.add(spec.default);
    }
  }
  return [...found];
}

const warehouseName = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");

/**
 * Removes people from everywhere recruit-sync keeps them: each warehouse
 * table FORGET_TABLES lists (DuckDB, PostgreSQL, files), the change-only
 * state and the unverified marks in Redis, and the files under the data
 * folder (rejects, warnings, spill, uploads); with an opt-out client, opts
 * them out in the service. Writes a receipt (forget-receipts/, 0600) that
 * holds hashes of the identifiers and counts, and returns it.
 *
 * @example
 * const receipt = await forgetPeople({ config, identifiers: ["ada@example.org"], redis });
 */
export async function forgetPeople(options: ForgetOptions): Promise<ForgetReceipt> {
  const startedAt = new Date().toISOString();
  const { config } = options;
  const who = whoFrom(options.identifiers);
  const subjects = subjectHashes(who);
  const dataDir = path.resolve(config.paths.dataDir);
  const log = options.logger;
  log?.info({ people: subjects.length }, "forget started");

  const urls = [...new Set([config.warehouse.url, ...(options.warehouses ?? [])])];
  const targets = urls.map((url) => ({ url, target: parseWarehouseUrl(url) }));
  const duckFiles = new Set(
    targets.flatMap((t) => (t.target.kind === "duckdb" ? [path.resolve(t.target.path)] : [])),
  );
  const receiptsDir = path.join(dataDir, RECEIPTS_FOLDER);
  const skip = (file: string) =>
    file === receiptsDir || [...duckFiles].some((d) => file === d || file.startsWith(`${d}.`));

  // Warehouses first: their participants name the person's ids, which the other places may hold alone.
  const warehouses: ForgetReceipt["warehouses"] = [];
  /** File warehouses inside the data folder: their files are scrubbed with it, and listed under the warehouse too. */
  const insideDataFolder = new Map<ForgetReceipt["warehouses"][number], string>();
  for (const { url, target } of targets) {
    if (target.kind === "duckdb") {
      warehouses.push({
        warehouse: warehouseName(url),
        kind: "duckdb",
        tables: await forgetInDuckDb(target.path, FORGET_TABLES, who),
      });
    } else if (target.kind === "postgres") {
      warehouses.push({
        warehouse: warehouseName(url),
        kind: "postgres",
        tables: await forgetInPostgres(target.url, FORGET_TABLES, who),
      });
    } else {
      const dir = path.resolve(target.dir);
      // A file warehouse inside the data folder is scrubbed with it below, as files.
      const inside = dir === dataDir || dir.startsWith(`${dataDir}${path.sep}`);
      const entry = {
        warehouse: warehouseName(url),
        kind: "file" as const,
        tables: [],
        files: inside ? [] : await scrubFolder(dir, who, () => false),
      };
      if (inside) insideDataFolder.set(entry, path.relative(dataDir, dir));
      warehouses.push(entry);
    }
  }

  const dataFolder = { folder: dataDir, files: await scrubFolder(dataDir, who, skip) };
  for (const [w, rel] of insideDataFolder)
    w.files = dataFolder.files.filter(
      (f: FileRemoval) => rel === "" || f.file.startsWith(`${rel}${path.sep}`),
    );

  const watchedFolders: ForgetReceipt["watchedFolders"] = [];
  for (const folder of new Set(config.watch.map((w) => path.resolve(w.folder)))) {
    if (folder === dataDir || folder.startsWith(`${dataDir}${path.sep}`)) continue;
    watchedFolders.push({ folder, files: await scrubFolder(folder, who, skip) });
  }

  let redis: ForgetReceipt["redis"];
  if (options.redis) {
    const prefix = config.redis.prefix;
    const keys = [...who.emails, ...who.phones];
    const changeOnlyFields = await forgetSentState(
      options.redis,
      prefix,
      keys,
      await populationsOf(config.paths.jobsDir),
    );
    const unverifiedMarks = await forgetUnverifiedMarks(options.redis, prefix, [
      ...[...who.emails].map((value) => ({ identifier: "email", value })),
      ...[...who.phones].map((value) => ({ identifier: "phone", value })),
    ]);
    redis = { prefix, changeOnlyFields, unverifiedMarks };
  } else {
    redis = { skipped: "no Redis: the change-only state and the unverified marks were not searched" };
  }

  const optOut = options.optOutClient ? await optOutInService(options.optOutClient, who) : undefined;
  const finishedAt = new Date().toISOString();
  const receipt = {
    kind: "forget" as const,
    startedAt,
    finishedAt,
    subjects,
    warehouses,
    redis,
    dataFolder,
    watchedFolders,
    ...(optOut ? { optOut } : {}),
  };
  const receiptFile = await writeReceipt(dataDir, receipt);
  log?.info({ people: subjects.length, receiptFile }, "forget finished");
  return { ...receipt, receiptFile };
}

/**
 * Opts the people out in the service (PUT /people/{personIdOrEmail}/opted-out,
 * spec 4.7): by each email, and by each person id the warehouse knew for a
 * phone (the endpoint finds people by email or id only). A person the service
 * does not know counts as not found.
 */
async function optOutInService(client: ApiClient, who: Who): Promise<NonNullable<ForgetReceipt["optOut"]>> {
  const result = { optedOut: 0, notFound: 0, failed: 0 };
  for (const key of [...who.emails, ...who.personIds]) {
    try {
      await client.updateOptedOut(key, true);
      result.optedOut++;
    } catch (err) {
      if (err instanceof NotFoundApiError) result.notFound++;
      else throw err;
    }
  }
  return result;
}
