import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { type ApiClient, createClient } from "../../api/index.ts";
import { loadConfig, readJobFile } from "../../config/index.ts";
import { type RunningEmulator, startEmulator } from "../../emulator/index.ts";
import { RecruitSyncError } from "../../errors/index.ts";
import { formatRunReport, RunReport, runExport } from "../../exports/index.ts";
import { createRateGovernor } from "../../governor/index.ts";
import {
  formatSummary,
  type ImportReport,
  type OptOutReport,
  runImport,
  runOptOut,
} from "../../imports/index.ts";
import { createSink } from "../../sinks/index.ts";
import { type DemoRedis, ensureRedis } from "./ensure-redis.ts";

/** The sample files and the job definitions that read them. */
export const DEMO_IMPORTS = [
  { job: "hubspot-contacts", file: "samples/hubspot-contacts.csv" },
  { job: "salesforce-contacts", file: "samples/salesforce-contact-report.csv" },
  { job: "mailchimp-audience", file: "samples/mailchimp-audience.csv" },
  { job: "opt-out-list", file: "samples/opt-out-list.csv" },
] as const;
export const DEMO_EXPORT_JOB = "nightly-export";

export interface DemoOptions {
  /** Project root holding jobs/ and samples/; default cwd. */
  root?: string;
  /** Warehouse URL; default the config's (duckdb:./data/warehouse.duckdb). */
  warehouse?: string;
  port?: number;
  /** Where rejects files go (under imports/); default the config's paths.dataDir. */
  dataDir?: string;
  out?: (line: string) => void;
  signal?: AbortSignal;
}

export interface DemoResult {
  emulator: RunningEmulator;
  imports: (ImportReport | OptOutReport)[];
  exportReport: RunReport;
  warehouse: string;
  redis: DemoRedis | undefined;
  /** Stops the emulator and any Redis the demo started. */
  stop(): Promise<void>;
}

/**
 * The embedded default in one go: the emulator, a Redis (the configured one,
 * or a throwaway redis-server), every sample imported through its job
 * definition, then the nightly export into the warehouse.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const root = path.resolve(options.root ?? ".");
  const out = options.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const config = loadConfig({ configDir: path.join(root, "config") });
  const dataDir = path.resolve(root, options.dataDir ?? config.paths.dataDir);
  await mkdir(path.join(dataDir, "imports"), { recursive: true, mode: 0o700 });
  const warehouse = options.warehouse ?? config.warehouse.url;

  const redis = await ensureRedis(config.redis.url);
  const emulator = await startEmulator({ port: options.port ?? 0 });
  const token = emulator.tokens[0]?.token ?? "";
  let redisConn: Redis | undefined;
  // Every demo run keeps its ledger and budget under a prefix of its own, removed at the end.
  const prefix = `recruit-sync-demo:${Date.now()}`;
  const stop = async () => {
    if (redisConn) {
      const keys = await redisConn.keys(`${prefix}:*`).catch(() => []);
      if (keys.length) await redisConn.del(...keys).catch(() => 0);
    }
    redisConn?.disconnect();
    await emulator.close();
    await redis?.stop();
  };
  try {
    out(`emulator   ${emulator.baseUrl}  (token ${token})`);
    out(
      redis
        ? `redis      ${redis.url}${redis.started ? " (started for the demo, keeps nothing on disk)" : ""}`
        : "redis      none found and redis-server is not on PATH: running without the shared budget and the import ledger",
    );
    let client: ApiClient;
    if (redis) {
      redisConn = new Redis(redis.url, { maxRetriesPerRequest: 2 });
      const governor = createRateGovernor({
        redis: redisConn,
        token,
        service: emulator.baseUrl,
        prefix,
      });
      client = createClient({ baseUrl: emulator.baseUrl, token, ...governor.clientHooks() });
    } else {
      client = createClient({ baseUrl: emulator.baseUrl, token });
    }

    const imports: (ImportReport | OptOutReport)[] = [];
    for (const step of DEMO_IMPORTS) {
      options.signal?.throwIfAborted();
      const job = await readJobFile(path.resolve(root, config.paths.jobsDir, `${step.job}.yaml`));
      if (!job.ok) {
        throw new RecruitSyncError(
          "config_invalid",
          `jobs/${step.job}.yaml is invalid: run 'recruit-sync jobs validate'`,
        );
      }
      const file = path.join(root, step.file);
      if (!existsSync(file))
        throw new RecruitSyncError("config_invalid", `the sample ${step.file} is missing`);
      const rejectsFile = path.join(dataDir, "imports", `demo-${step.job}.rejects.csv`);
      const d = job.definition;
      out("");
      if (d.kind === "import") {
        const report = await runImport({
          file,
          definition: d,
          client,
          rejectsFile,
          workDir: path.join(dataDir, "spill"),
          force: true,
          ...(redisConn ? { ledger: { redis: redisConn, prefix } } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        });
        imports.push(report);
        out(formatSummary(report));
      } else if (d.kind === "opt-out") {
        const report = await runOptOut({
          file,
          definition: d,
          client,
          rejectsFile,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        imports.push(report);
        out(formatSummary(report));
      }
    }

    options.signal?.throwIfAborted();
    const exportJob = await readJobFile(path.resolve(root, config.paths.jobsDir, `${DEMO_EXPORT_JOB}.yaml`));
    if (!exportJob.ok || exportJob.definition.kind !== "export") {
      throw new RecruitSyncError(
        "config_invalid",
        `jobs/${DEMO_EXPORT_JOB}.yaml is invalid: run 'recruit-sync jobs validate'`,
      );
    }
    const sinkUrl = warehouse.startsWith("duckdb:") ? resolveDuckdb(warehouse, root) : warehouse;
    if (sinkUrl.startsWith("duckdb:"))
      await mkdir(path.dirname(sinkUrl.slice("duckdb:".length)), { recursive: true });
    const sink = await createSink(sinkUrl);
    let exportReport: RunReport;
    try {
      exportReport = await runExport({
        definition: exportJob.definition,
        client,
        sink,
        ...(options.signal ? { signal: options.signal } : {}),
      }).catch((err: unknown) => {
        // A failed export still has a report worth showing; the summary says it failed.
        const report = RunReport.safeParse(err instanceof RecruitSyncError ? err.report : undefined);
        if (!report.success) throw err;
        return report.data;
      });
    } finally {
      await sink.close();
    }
    out("");
    out(formatRunReport(exportReport));
    return { emulator, imports, exportReport, warehouse: sinkUrl, redis, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function resolveDuckdb(url: string, root: string): string {
  const p = url.slice("duckdb:".length);
  return `duckdb:${path.resolve(root, p)}`;
}
