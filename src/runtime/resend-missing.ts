import path from "node:path";
import type { ImportReport, OptOutReport } from "../imports/index.ts";
import { extractRows, type MissingRows, missingByRun } from "../synclog/resend.ts";
import { SYNC_LOG_TABLE } from "../synclog/table.ts";
import { openLogSink } from "../synclog/write-run-log.ts";
import { resolveImportDefinition } from "./import-definition.ts";
import type { RunContext } from "./run-context.ts";
import { runImportJob } from "./run-import-job.ts";

export interface ResendOutcome {
  /** Runs whose missing people were sent again, with the new run's report. */
  resent: { from: MissingRows; report: ImportReport | OptOutReport }[];
  /** Runs whose file is gone or changed (or had no job definition): the rows to import again by hand. */
  left: MissingRows[];
}

/**
 * Sends the people a read-back check found missing again, through the normal
 * import path: the log keeps no one's data, so the rows are read again from
 * the file the run recorded, if it is still there with the same bytes
 * (docs/spec-decisions.md). Only those rows go: a file of them under
 * `<dataDir>/imports/resend/`, imported with the run's job as a full run
 * (change-only state would hold them back as already sent). Their old log
 * rows become `resent`; the new run logs them `unchecked` for the next check.
 */
export async function resendMissing(ctx: RunContext, studyId?: string): Promise<ResendOutcome> {
  const { config } = ctx;
  const target = { url: config.warehouse.url, lockWaitMs: config.syncLog.lockWaitMs };
  let sink = await openLogSink(target);
  let groups: MissingRows[];
  try {
    groups = await missingByRun(sink, studyId);
  } finally {
    await sink.close();
  }
  const outcome: ResendOutcome = { resent: [], left: [] };
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  for (const group of groups) {
    if (!group.job || !group.file) {
      outcome.left.push(group);
      continue;
    }
    const { definition } = await resolveImportDefinition({ job: group.job }, config.paths.jobsDir);
    const out = path.resolve(config.paths.dataDir, "imports", "resend", `${group.runId}-${stamp}.csv`);
    const sink0 = await openLogSink(target);
    const hash = (await sink0.readRuns()).find((r) => r.runId === group.runId)?.fileHash ?? null;
    await sink0.close();
    if (!(await extractRows(group.file, hash, group.rows, out, definition.source))) {
      outcome.left.push(group);
      continue;
    }
    const { report } = await runImportJob(
      {
        file: out,
        given: { by: "shell" },
        job: group.job,
        encoding: "utf-8",
        runId: `resend-${stamp}`,
        force: true,
        full: true,
      },
      ctx,
    );
    outcome.resent.push({ from: group, report });
    sink = await openLogSink(target);
    try {
      await sink.prepare([SYNC_LOG_TABLE]);
      const digests = new Set(group.digests);
      const rows = (await sink.readTable(SYNC_LOG_TABLE.name))
        .filter((r) => r.run_id === group.runId && digests.has(String(r.person_digest)))
        .map((r) => ({ ...r, verification: "resent" }));
      if (rows.length)
        await sink.commit({ runId: group.runId, upsert: { table: SYNC_LOG_TABLE.name, rows } });
    } finally {
      await sink.close();
    }
  }
  return outcome;
}
