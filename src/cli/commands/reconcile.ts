import os from "node:os";
import type { Command } from "commander";
import { interruptSignal } from "../interrupt-signal.ts";
import { collect } from "../repeatable.ts";
import { commandLogger } from "../verbosity.ts";

interface ReconcileFlags {
  study: string[];
  resend?: boolean;
  json?: boolean;
}

/**
 * `recruit-sync reconcile [--study S]... [--resend]`: the read-back check
 * without waiting for a scheduled export (docs/exports.md, "The run's log").
 */
export function registerReconcileCommand(program: Command): void {
  program
    .command("reconcile")
    .description("check that the people sent are in the service, by paging their studies' participants")
    .option(
      "--study <id>",
      "a study to check (repeatable); default: the studies with people to check",
      collect,
      [],
    )
    .option("--resend", "send the people found missing again, from the files their runs read")
    .option("--json", "print the outcome as JSON")
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync reconcile --study study_1
  recruit-sync reconcile --resend`,
    )
    .action(async (flags: ReconcileFlags) => {
      const { loadConfig } = await import("../../config/index.ts");
      const { reconcileStudies } = await import("../../runtime/reconcile-studies.ts");
      const config = loadConfig();
      const interrupt = interruptSignal();
      try {
        const outcome = await reconcileStudies(
          {
            config,
            holder: `recruit-sync reconcile on ${os.hostname()} pid ${process.pid}`,
            signal: interrupt.signal,
            logger: commandLogger("reconcile"),
          },
          { studies: flags.study, ...(flags.resend ? { resend: true } : {}) },
        );
        if (flags.json) {
          const { resend, checked } = outcome;
          const plain = {
            checked,
            ...(resend
              ? {
                  resent: resend.resent.map((r) => ({
                    fromRun: r.from.runId,
                    people: r.from.digests.length,
                    imported: r.report.kind === "import" ? r.report.imported : 0,
                  })),
                  left: resend.left.map((l) => ({ runId: l.runId, job: l.job, file: l.file, rows: l.rows })),
                }
              : {}),
          };
          process.stdout.write(`${JSON.stringify(plain, null, 2)}\n`);
          return;
        }
        const lines: string[] = [];
        if (outcome.checked.length === 0) lines.push("no study had people to check");
        for (const c of outcome.checked)
          lines.push(`${c.studyId}: ${c.verified} verified, ${c.missing} missing`);
        for (const r of outcome.resend?.resent ?? [])
          lines.push(
            `sent again: ${r.from.digests.length} people of run ${r.from.runId} (${r.report.kind === "import" ? r.report.imported : 0} imported)`,
          );
        for (const l of outcome.resend?.left ?? [])
          lines.push(
            `not sent again: run ${l.runId}'s file ${l.file ?? "(not recorded)"} is gone or changed; import rows ${l.rows.join(", ")} of it again`,
          );
        process.stdout.write(`${lines.join("\n")}\n`);
      } finally {
        interrupt.release();
      }
    });
}
