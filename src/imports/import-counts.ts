import {
  buildImportReport,
  noReadCounts,
  type ReadReportCounts,
  type ReportIdentity,
  type RunTimes,
} from "./build-report.ts";
import type { ImportProgress, ImportReport } from "./report.ts";
import { quietWarnings, type WarningCounts } from "./run-warnings.ts";
import { SendTally } from "./send-counts.ts";

type ProgressCounts = Pick<
  ImportProgress,
  "rowsRead" | "imported" | "rejected" | "duplicates" | "batches" | "batchesResumed" | "requests"
>;

/**
 * What each phase of a run hands back, as it stands: the read phase's counts,
 * the send phase's tally, the warnings' counts, and what the run says of
 * itself. The report (build-report.ts) and the progress are made from these
 * alone, at the end or, for the error that ends a failed run, as they stand.
 */
export class ImportCounts {
  read: ReadReportCounts = noReadCounts();
  readonly send = new SendTally();
  warnings: WarningCounts;
  changeState: ImportReport["changeState"];
  /** A dry run whose real run would be refused: why. */
  wouldBeRefused: string | undefined;
  readonly files = { rejectsFile: null as string | null, requestsFile: null as string | null };
  readonly identity: ReportIdentity;
  readonly times: RunTimes;
  /** The run's own warning lines, before the phases'. */
  readonly notes: string[];

  constructor(
    identity: ReportIdentity,
    times: RunTimes,
    notes: string[],
    policy: Parameters<typeof quietWarnings>[0],
  ) {
    this.identity = identity;
    this.times = times;
    this.notes = notes;
    this.warnings = quietWarnings(policy);
  }

  report(): ImportReport {
    return buildImportReport({
      identity: this.identity,
      read: this.read,
      send: this.send.counts(),
      warnings: this.warnings,
      changeState: this.changeState,
      notes: this.notes,
      files: this.files,
      times: this.times,
      wouldBeRefused: this.wouldBeRefused,
    });
  }

  progress(): ProgressCounts {
    const send = this.send;
    return {
      rowsRead: this.read.rowsRead,
      imported: send.imported,
      rejected: this.read.rejected + send.rejected,
      duplicates: send.duplicates,
      batches: send.batches,
      batchesResumed: send.batchesResumed,
      requests: send.requests,
    };
  }
}
