import path from "node:path";
import type { JobSchedulerJson, Queue } from "bullmq";
import type { Logger } from "pino";
import { z } from "zod";
import type { RuntimeConfig } from "../config/index.ts";
import { type JobFile, readJobFiles } from "../config/index.ts";
import type { Problem } from "../errors/index.ts";
import type { RedisConnection } from "../runtime/index.ts";
import { grantDefinition } from "../runtime/warehouse-grant.ts";
import type { ExportJobDataInput } from "./job-data.ts";
import { defaultJobOptions, priorityOf } from "./queues.ts";

/** Our schedulers' ids start with this, so reconciling never touches one made by hand on the dashboard. */
export const SCHEDULER_PREFIX = "schedule-";

export interface ReconcileResult {
  added: string[];
  updated: string[];
  removed: string[];
  unchanged: string[];
  /** Definitions that could not be scheduled, with the file and path of each problem. */
  invalid: { file: string; problems: Problem[] }[];
  /** Schedulers kept with their last valid definition because their file stopped validating. */
  kept: string[];
}

/** A definition of jobs/ that does not validate, as /readyz, /metrics and the dashboard show it. */
export const InvalidDefinition = z.object({
  file: z.string(),
  problems: z.array(z.object({ path: z.string(), message: z.string() })),
  /** The export schedule of this name still runs, with the definition as it last validated. */
  scheduleKept: z.boolean(),
  since: z.string(),
});
export type InvalidDefinition = z.infer<typeof InvalidDefinition>;

/** The hash of invalid definitions, by job name, that each reconcile rewrites. */
export function invalidDefinitionsKey(prefix: string): string {
  return `${prefix}:definitions:invalid`;
}

/** What the last reconcile found invalid in jobs/; an entry that does not parse is skipped. */
export async function readInvalidDefinitions(
  redis: RedisConnection,
  prefix: string,
): Promise<Record<string, InvalidDefinition>> {
  const raw = await redis.hgetall(invalidDefinitionsKey(prefix));
  const out: Record<string, InvalidDefinition> = {};
  for (const [name, json] of Object.entries(raw)) {
    try {
      const parsed = InvalidDefinition.safeParse(JSON.parse(json));
      if (parsed.success) out[name] = parsed.data;
    } catch {
      // Not ours to mend: the next reconcile writes it again.
    }
  }
  return out;
}

/** The job name a kept scheduler's runs carry: the dashboard lists them with it. */
export function keptSchedulerName(file: string): string {
  return `export (last valid definition: ${path.basename(file)} is invalid)`;
}

function grantOf(config: RuntimeConfig, definition: Record<string, unknown>): { definitionGrant?: string } {
  const grant = grantDefinition(config, definition);
  return grant ? { definitionGrant: grant } : {};
}

interface Wanted {
  pattern: string;
  tz: string;
  name: string;
  data: ExportJobDataInput;
}

/**
 * Makes the `exports` queue's job schedulers match the export definitions
 * of jobs/ that have `schedule: {cron, timezone}`: new ones added, changed
 * ones upserted, ones whose definition left (or lost its schedule) removed.
 * Each scheduler carries its whole definition as it validated, so a file that
 * stops validating (a typo) never removes a good schedule: the scheduler is
 * kept with its last valid definition, renamed to say so, and the file is
 * listed as invalid in Redis for /readyz, /metrics and the dashboard.
 */
export async function reconcileSchedulers(
  config: RuntimeConfig,
  exportsQueue: Queue<ExportJobDataInput>,
  logger: Logger,
  files?: JobFile[],
): Promise<ReconcileResult> {
  const jobFiles = files ?? (await readJobFiles(config.paths.jobsDir));
  const result: ReconcileResult = {
    added: [],
    updated: [],
    removed: [],
    unchanged: [],
    invalid: [],
    kept: [],
  };
  const existing = new Map<string, JobSchedulerJson<ExportJobDataInput>>();
  for (const s of await exportsQueue.getJobSchedulers(0, -1)) {
    const id = s.key ?? s.id;
    if (id?.startsWith(SCHEDULER_PREFIX)) existing.set(id, s);
  }

  const wanted = new Map<string, Wanted>();
  const invalid: Record<string, InvalidDefinition> = {};
  const since = new Date().toISOString();
  for (const f of jobFiles) {
    const id = `${SCHEDULER_PREFIX}${f.name}`;
    if (!f.ok) {
      result.invalid.push({ file: f.file, problems: f.problems });
      const had = existing.get(id);
      invalid[f.name] = { file: f.file, problems: f.problems, scheduleKept: had !== undefined, since };
      if (had?.pattern && had.template?.data) {
        result.kept.push(id);
        wanted.set(id, {
          pattern: had.pattern,
          tz: had.tz ?? "UTC",
          name: keptSchedulerName(f.file),
          data: had.template.data,
        });
      }
      continue;
    }
    const d = f.definition;
    if (d.kind !== "export" || !d.schedule) continue;
    wanted.set(id, {
      pattern: d.schedule.cron,
      tz: d.schedule.timezone,
      name: "export",
      // The definition itself, not its name: a later typo in the file leaves this one running.
      data: {
        kind: "export",
        job: f.name,
        definition: d as Record<string, unknown>,
        ...grantOf(config, d as Record<string, unknown>),
        origin: "schedule",
      },
    });
  }
  await keepInvalidList(exportsQueue, config.redis.prefix, invalid);

  const options = defaultJobOptions(config);
  for (const [id, want] of wanted) {
    const had = existing.get(id);
    const same =
      had !== undefined &&
      had.pattern === want.pattern &&
      had.tz === want.tz &&
      had.name === want.name &&
      JSON.stringify(had.template?.data) === JSON.stringify(want.data);
    if (same) {
      result.unchanged.push(id);
      continue;
    }
    await exportsQueue.upsertJobScheduler(
      id,
      { pattern: want.pattern, tz: want.tz },
      { name: want.name, data: want.data, opts: { ...options, priority: priorityOf("schedule") } },
    );
    if (!had) result.added.push(id);
    else result.updated.push(id);
  }
  for (const id of existing.keys()) {
    if (wanted.has(id)) continue;
    await exportsQueue.removeJobScheduler(id);
    result.removed.push(id);
  }
  for (const entry of Object.values(invalid)) {
    logger.error(
      { file: entry.file, problems: entry.problems, scheduleKept: entry.scheduleKept },
      entry.scheduleKept
        ? "job definition invalid: its schedule keeps running with the last valid definition until the file is mended"
        : "job definition invalid: not scheduled",
    );
  }
  // Every worker reconciles every queue.reconcileMs: a pass that changed nothing is not news.
  const changed =
    result.added.length + result.updated.length + result.removed.length + result.kept.length > 0;
  logger[changed ? "info" : "debug"](
    {
      added: result.added,
      updated: result.updated,
      removed: result.removed,
      kept: result.kept,
      unchanged: result.unchanged.length,
      invalid: result.invalid.length,
    },
    "schedules reconciled with jobs/",
  );
  return result;
}

/** Rewrites the hash of invalid definitions, keeping each entry's first `since`. */
async function keepInvalidList(
  queue: Queue<ExportJobDataInput>,
  prefix: string,
  invalid: Record<string, InvalidDefinition>,
): Promise<void> {
  const redis = (await queue.backend.client) as unknown as RedisConnection;
  const before = await readInvalidDefinitions(redis, prefix);
  const key = invalidDefinitionsKey(prefix);
  const gone = Object.keys(before).filter((name) => !(name in invalid));
  if (gone.length) await redis.hdel(key, ...gone);
  for (const [name, entry] of Object.entries(invalid)) {
    const first = before[name]?.since ?? entry.since;
    await redis.hset(key, name, JSON.stringify({ ...entry, since: first }));
  }
}
