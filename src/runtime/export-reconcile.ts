import type { Logger } from "pino";
import type { ExportJobDefinition } from "../config/export-job.ts";
import type { RuntimeConfig } from "../config/index.ts";
import type { RunReport } from "../exports/index.ts";
import type { Sink } from "../sinks/index.ts";
import { reconcileStudy, type StudyCheck } from "../synclog/reconcile.ts";
import { reportReconciliation } from "../synclog/reconciliation-outcomes.ts";
import { asRedis, type RedisConnection } from "./redis-connection.ts";
import type { RunContext } from "./run-context.ts";

/**
 * The read-back check after an export that paged participants: each study
 * whose participants it wrote is matched against the people sent to it
 * (src/synclog/reconcile.ts). A check that fails is a warning: the export's
 * data is written either way, and the next export checks again.
 */
export async function checkExportedStudies(input: {
  config: RuntimeConfig;
  definition: ExportJobDefinition;
  report: RunReport;
  sink: Sink;
  redis: RedisConnection;
  startedAt: Date;
  logger?: Logger | undefined;
}): Promise<StudyCheck[]> {
  const { config, definition, report } = input;
  if (!config.syncLog.enabled || report.resources.participants?.status !== "succeeded") return [];
  const checks: StudyCheck[] = [];
  for (const studyId of definition.studies) {
    try {
      const check = await reconcileStudy({
        sink: input.sink,
        redis: asRedis(input.redis),
        prefix: config.redis.prefix,
        studyId,
        exportStartedAt: input.startedAt,
      });
      checks.push(check);
      // The missingPeople alert rule reads the latest check of each study (docs/ops.md, "Alerts").
      await reportReconciliation(asRedis(input.redis), config.redis.prefix, {
        job: `study ${studyId}`,
        missing: check.missing,
        checked: check.verified + check.missing,
        at: new Date().toISOString(),
      });
      if (check.missing > 0) {
        input.logger?.warn(
          { studyId, missing: check.missing, verified: check.verified },
          "people the service accepted are missing from the export: recruit-sync reconcile --resend sends them again",
        );
      }
    } catch (err) {
      input.logger?.warn(
        { studyId, err: err instanceof Error ? err.message : String(err) },
        "the read-back check of a study failed; the next export checks again",
      );
    }
  }
  return checks;
}

/**
 * With `syncLog.resendMissing`, sends the people an export's check found
 * missing again at once (resend-missing.ts), study by study. A resend that
 * fails is a warning: `recruit-sync reconcile --resend` tries again.
 */
export async function resendFoundMissing(ctx: RunContext, report: RunReport): Promise<void> {
  if (!ctx.config.syncLog.resendMissing) return;
  for (const check of report.reconciliation ?? []) {
    if (check.missing === 0) continue;
    try {
      const { resendMissing } = await import("./resend-missing.ts");
      const outcome = await resendMissing(ctx, check.studyId);
      ctx.logger?.info(
        { studyId: check.studyId, resent: outcome.resent.length, left: outcome.left.length },
        "missing people sent again",
      );
    } catch (err) {
      ctx.logger?.warn(
        { studyId: check.studyId, err: err instanceof Error ? err.message : String(err) },
        "sending the missing people again failed; recruit-sync reconcile --resend tries again",
      );
    }
  }
}
