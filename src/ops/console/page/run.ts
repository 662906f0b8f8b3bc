// 4. A dry run or a run, followed to its end, and a corrected rejects file
// dropped back in.
import type { ProgressModel } from "../../../queue/progress-model-schema.ts";
import { type JobReport, PreviewAnswer, RunQueued, RunStatus, UploadAnswer } from "../api-contract.ts";
import { isDryRun } from "../run-label.ts";
import { call, reasonOf } from "./api.ts";
import { box, byId, counts, el, figure } from "./dom.ts";
import { busy, definition, formWith } from "./mapping.ts";
import { showPreview } from "./preview.ts";
import { clearProblem, showProblem } from "./problem.ts";
import { page } from "./state.ts";
import { ahead, duration, reportOf, when } from "./words.ts";

/** Queues a run of the file on the page with the mapping on the page, and follows it. */
export async function run(dryRun: boolean): Promise<void> {
  const upload = page.upload;
  if (!upload) return;
  clearProblem();
  busy(true, dryRun ? "Queueing a dry run…" : "Queueing the import…");
  try {
    const queued = await call(RunQueued, "POST", `api/uploads/${upload.uploadId}/run`, {
      definition: definition(),
      dryRun,
    });
    busy(false, queued.duplicate ? "This file was already run with this mapping: showing that run." : "");
    box("run-title").textContent = dryRun ? "4. The dry run" : "4. The run";
    box("run").hidden = false;
    for (const id of ["run-failure", "rejects", "rejects-again"]) box(id).hidden = true;
    box("run-id").textContent = `Job ${queued.jobId}`;
    // The last run's words and counts go: they are not this run's.
    box("run-state").textContent = "Queued…";
    box("run-message").textContent = "";
    box("run-projection").textContent = "";
    box("run-counts").replaceChildren();
    follow(queued.jobId);
  } catch (err) {
    busy(false);
    const { message, problems } = reasonOf(err);
    showProblem(message, problems);
  }
}

/** Asks for the run's state every second until it is finished (every 3 s while the server does not answer). */
function follow(jobId: string): void {
  page.following = jobId;
  const tick = async () => {
    if (page.following !== jobId) return;
    let status: RunStatus;
    try {
      status = await call(RunStatus, "GET", `api/runs/imports/${encodeURIComponent(jobId)}`);
    } catch (err) {
      box("run-message").textContent = `Cannot ask for the run's state: ${reasonOf(err).message}`;
      setTimeout(tick, 3000);
      return;
    }
    showRun(jobId, status);
    if (!status.finished) setTimeout(tick, 1000);
  };
  void tick();
}

function stateInWords(status: RunStatus, dry: boolean): string {
  if (!status.finished)
    return `${status.stateInWords[0]?.toUpperCase() ?? ""}${status.stateInWords.slice(1)}…`;
  if (status.state !== "completed") return "Failed.";
  return dry ? "Dry run finished: nothing was sent." : "Finished.";
}

/**
 * The bar: the progress model's share while the run goes on; full once it
 * finished; for a failed run, how far it got (rows settled of the rows read),
 * in the colour of a failure, never a full bar.
 */
function showBar(status: RunStatus): void {
  const bar = byId("run-progress", HTMLProgressElement);
  const failed = status.state === "failed";
  bar.classList.toggle("failed", failed);
  const rows = status.model.rows;
  if (failed) {
    bar.max = Math.max(1, rows?.read ?? 1);
    bar.value = rows && rows.read > 0 ? Math.min(rows.read, rows.imported + rows.rejected + rows.merged) : 0;
  } else if (status.finished) {
    bar.max = 1;
    bar.value = 1;
  } else if (status.model.percent !== null) {
    bar.max = 100;
    bar.value = status.model.percent;
  } else bar.removeAttribute("value");
}

/** The run's counts: its report's once it has one, else the progress so far. */
function runCounts(report: JobReport | null, model: ProgressModel, dry: boolean): [string, number][] | null {
  const imported = dry ? "would be imported" : "imported";
  if (report && "kind" in report) {
    return [
      ["rows read", report.rowsRead],
      [imported, report.kind === "import" ? report.imported : report.updated],
      ["rejected", report.rejected],
      ["merged duplicates", report.duplicates],
      ["batches", report.kind === "import" ? report.batches : 0],
      ["requests", report.requests],
    ];
  }
  if (!model.rows) return null;
  return [
    ["rows read", model.rows.read],
    [imported, model.rows.imported],
    ["rejected", model.rows.rejected],
    ["merged duplicates", model.rows.merged],
    ["batches", model.batches?.sent ?? 0],
    ["requests", model.requests],
  ];
}

function projectionInWords(status: RunStatus): string {
  if (status.finished) return "";
  const finish = status.projectedFinish ? `Should finish about ${when(status.projectedFinish)}` : null;
  if (ahead(status.waitingUntil)) {
    return `Paused for the rate budget until ${when(status.waitingUntil)}. ${finish ? `${finish}.` : ""}`;
  }
  if (finish) return `${finish}: ${status.projectionBasis}.`;
  return status.projectionBasis ? `Finish ${status.projectionBasis}.` : "";
}

function showRun(jobId: string, status: RunStatus): void {
  const dry = isDryRun(status.data);
  box("run-state").textContent = stateInWords(status, dry);
  // A finished run's report and failure say it all; the worker's last word ("done") adds nothing.
  box("run-message").textContent = status.finished
    ? ""
    : (status.message ?? (status.model.phase ? `phase: ${status.model.phase}` : ""));
  showBar(status);
  const figures = runCounts(reportOf(status.report), status.model, dry);
  if (figures) {
    counts("run-counts", figures);
    box("run-counts").append(figure(duration(status.budgetWaitMs), "waited on the rate budget"));
  }
  box("run-projection").textContent = projectionInWords(status);
  if (status.state === "failed" && status.failure) {
    const failure = box("run-failure");
    failure.textContent = status.failure.message ?? status.failure.failedReason ?? "the run failed";
    failure.hidden = false;
  }
  if (status.finished && status.rejectsFile) {
    box("rejects").replaceChildren(
      el("a", "Download the rejected rows (CSV)", {
        href: `api/runs/imports/${encodeURIComponent(jobId)}/rejects.csv`,
        download: "",
      }),
    );
    box("rejects").hidden = false;
    // Only a real run's rejects are worth correcting and importing again with this mapping.
    box("rejects-again").hidden = dry;
  }
}

/**
 * Uploads the corrected rejects file and checks it against the mapping on
 * the page: it must be a rejects file (the import then drops its own columns
 * and restores the cells), and the preview, a dry run with this mapping, must
 * find every column the mapping reads. Then Run imports it.
 */
export async function uploadCorrected(file: File): Promise<void> {
  clearProblem();
  const status = box("mapping-status");
  status.textContent = `Checking ${file.name} against the mapping…`;
  try {
    const upload = await call(UploadAnswer, "POST", "api/uploads", formWith(file));
    const name = upload.fileName ?? file.name;
    if (!upload.rejectsFile) {
      status.textContent = "";
      showProblem(
        `${name} is not a rejects file: its header does not start with _source_row,_reject_reason. Keep those columns first when you correct the rows, so that the import reads the cells as they were.`,
      );
      return;
    }
    const p = await call(PreviewAnswer, "POST", `api/uploads/${upload.uploadId}/preview`, {
      definition: definition(),
    });
    page.upload = upload;
    box("file-status").textContent =
      `${name}: the corrected rejects file, ${p.report.rowsRead} rows, with the mapping above.`;
    showPreview(p);
    box("run").hidden = true;
    const imported = p.report.kind === "import" ? p.report.imported : p.report.updated;
    status.textContent = `${name} has the columns the mapping reads: ${imported} of its ${p.report.rowsRead} rows would be imported, ${p.report.rejected} rejected again. Run it with "Run the import".`;
  } catch (err) {
    status.textContent = "";
    const { message, problems } = reasonOf(err);
    showProblem(`The corrected file does not fit the mapping: ${message}`, problems);
  }
}
