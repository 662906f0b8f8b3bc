import type { ImportRun } from "./import-run.ts";
import { writeLateRejects } from "./late-rejects.ts";
import type { ImportReport } from "./report.ts";
import type { RunWarnings } from "./run-warnings.ts";
import { warningsFileBeside } from "./warnings-file.ts";

/**
 * What needs every answer: the rows the service refused (late-rejects.ts),
 * then the warnings (run-warnings.ts); then the report, made once from the
 * phases' counts (build-report.ts), and the change state and the ledger
 * marked done.
 */
export async function finishRun(r: ImportRun, warnings: RunWarnings): Promise<ImportReport> {
  const { options, counts, files } = r;
  const late = counts.send.refusedRows;
  if (late.size > 0) {
    r.progress.tell("rejects");
    await writeLateRejects(r.format, late, files.rejects, options.signal, options.parseInWorker);
  }
  counts.warnings = await warnings.finish({
    warningsFile: options.warningsFile ?? warningsFileBeside(options.rejectsFile),
    refusedRows: late,
  });
  counts.files.rejectsFile = await files.rejects.close();
  counts.files.requestsFile = await files.requests.close();
  counts.times.finished = Date.now();
  const report = counts.report();
  await r.gate.sent?.finish();
  await r.ledger?.finish(report);
  r.progress.tell("done");
  const { rowsRead: rows, imported, unchanged, rejected, requests } = report;
  options.logger?.info({ job: r.job, rows, imported, unchanged, rejected, requests }, "import finished");
  return report;
}
