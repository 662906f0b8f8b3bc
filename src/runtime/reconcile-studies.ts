import type { RunReport } from "../exports/index.ts";
import { unverifiedStudiesKey } from "../imports/unverified-people.ts";
import { SYNC_LOG_TABLE } from "../synclog/table.ts";
import { openLogSink } from "../synclog/write-run-log.ts";
import { asRedis, connectRedis } from "./redis-connection.ts";
import { type ResendOutcome, resendMissing } from "./resend-missing.ts";
import type { RunContext } from "./run-context.ts";
import { runExportJob } from "./run-export-job.ts";

export interface ReconcileOutcome {
  /** The studies paged, each with its export's read-back check. */
  checked: NonNullable<RunReport["reconciliation"]>;
  resend?: ResendOutcome;
}

/**
 * The studies a read-back check has work in: those the count-mismatch marks
 * name (Redis), and those with people sync_log holds as sent and not yet
 * checked.
 */
export async function studiesToCheck(ctx: RunContext): Promise<string[]> {
  const { config } = ctx;
  const studies = new Set<string>();
  const redis = await connectRedis(config, "the unverified marks are there");
  try {
    for (const s of await asRedis(redis).smembers(unverifiedStudiesKey(config.redis.prefix))) studies.add(s);
  } finally {
    redis.disconnect();
  }
  const sink = await openLogSink({ url: config.warehouse.url, lockWaitMs: config.syncLog.lockWaitMs });
  try {
    await sink.prepare([SYNC_LOG_TABLE]);
    for (const row of await sink.readTable(SYNC_LOG_TABLE.name)) {
      if (
        row.outcome === "imported" &&
        (row.verification === "unchecked" || row.verification === "unverified")
      )
        studies.add(String(row.study_id));
    }
  } finally {
    await sink.close();
  }
  return [...studies].sort();
}

/**
 * `recruit-sync reconcile`: pages the participants of the given studies (or
 * of those that need a check) into the warehouse — the export's read-back
 * check marks the people sent `verified` or `missing` — then, with
 * `resend`, sends the missing people again (resend-missing.ts).
 */
export async function reconcileStudies(
  ctx: RunContext,
  options: { studies?: readonly string[]; resend?: boolean },
): Promise<ReconcileOutcome> {
  const studies = options.studies?.length ? [...options.studies] : await studiesToCheck(ctx);
  const outcome: ReconcileOutcome = { checked: [] };
  if (studies.length > 0) {
    const { report } = await runExportJob(
      { definition: { kind: "export", name: "reconcile", resources: ["participants"], studies } },
      ctx,
    );
    outcome.checked = report.reconciliation ?? [];
  }
  if (options.resend) {
    const resent: ResendOutcome = { resent: [], left: [] };
    for (const studyId of studies.length ? studies : [undefined]) {
      const r = await resendMissing(ctx, studyId);
      resent.resent.push(...r.resent);
      resent.left.push(...r.left);
    }
    outcome.resend = resent;
  }
  return outcome;
}
