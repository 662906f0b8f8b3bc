import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import { RecruitSyncError } from "../errors/index.ts";
import type { ImportReport, OptOutReport } from "../imports/index.ts";
import type { SyncRunRecord, SyncRunStatus } from "../sinks/index.ts";
import { PartLoader } from "../synclog/part-loader.ts";
import { PersonLog } from "../synclog/person-log.ts";
import { prepareRunLog, type RunLogTarget } from "../synclog/write-run-log.ts";

/** The numbers of a report, as sync_runs.counts holds them. */
function countsOf(report: ImportReport | OptOutReport): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [k, v] of Object.entries(report)) {
    if (typeof v === "number" && Number.isInteger(v)) counts[k] = v;
  }
  if (report.kind === "import") counts.countMismatches = report.countMismatches.length;
  return counts;
}

/**
 * One import or opt-out run's part of the warehouse log: its sync_runs row
 * and a sync_log row per person. Built before the run starts, the people
 * written to parts of `logFile` as the run goes (person-log.ts) and loaded
 * part by part beside it (part-loader.ts), the rest loaded with the run row
 * when told how it ended, every part removed; a log the warehouse cannot
 * take is a warning, never the run's failure (the people are in the service
 * either way).
 */
export class ImportRunLog {
  readonly people: PersonLog | undefined;
  readonly #startedAt = new Date();
  readonly #config: RuntimeConfig;
  readonly #about: {
    runId: string;
    job: string;
    kind: "import" | "opt_out";
    studyId: string | null;
    file: string;
  };
  readonly #logger: Logger | undefined;
  #fileHash: string | null = null;
  readonly #identifier: string | null;
  readonly #loader: PartLoader;

  constructor(
    config: RuntimeConfig,
    about: {
      runId: string;
      job: string;
      kind: "import" | "opt_out";
      studyId: string | null;
      identifier: string | null;
      file: string;
      /** Where the people's lines go as the run goes: beside the run's other files. */
      logFile: string;
      /** The job sorts people into populations: one identifier may be two people. */
      populations?: boolean;
    },
    logger?: Logger,
  ) {
    this.#config = config;
    this.#about = about;
    this.#logger = logger;
    // An opt-out list names people by email or person id: the lines of person ids say so themselves.
    this.#identifier = about.kind === "opt_out" ? "email" : about.identifier;
    // Started now, it runs beside the import; a failure here is tried again at the end.
    const prepared = prepareRunLog(this.#target).then(
      () => true,
      () => false,
    );
    const identifier = this.#identifier ?? "";
    this.#loader = new PartLoader(this.#target, {
      runId: about.runId,
      constants: { job: about.job, studyId: about.studyId ?? "", identifier },
      prepared,
      mayRepeat: () => this.people?.mayRepeat === true,
    });
    this.people = this.#identifier
      ? this.#openPeople(this.#identifier, about.logFile, about.populations === true)
      : undefined;
  }

  get #target(): RunLogTarget {
    return { url: this.#config.warehouse.url, lockWaitMs: this.#config.syncLog.lockWaitMs };
  }

  /** The people's log file; one that cannot be made leaves the run without its people's rows, with a warning. */
  #openPeople(identifier: string, file: string, populations: boolean): PersonLog | undefined {
    try {
      return new PersonLog(identifier, file, {
        populations,
        partLines: this.#config.syncLog.partLines,
        onPart: (part) => this.#loader.add(part),
      });
    } catch (err) {
      this.#logger?.warn(
        { job: this.#about.job, err: err instanceof Error ? err.message : String(err) },
        "the run's sync log file could not be made: its people are left out of sync_log",
      );
      return undefined;
    }
  }

  /** The sync_runs run id of an import: the job's name and the way in's run id, as its output files are named. */
  get runId(): string {
    return this.#about.runId;
  }

  fileHash(hash: string): void {
    this.#fileHash = hash;
  }

  async finished(report: ImportReport | OptOutReport): Promise<void> {
    if (report.kind === "import") this.#fileHash = report.fileHash;
    await this.#write("succeeded", countsOf(report), null, null);
  }

  async failed(err: unknown, aborted: boolean): Promise<void> {
    const code = err instanceof RecruitSyncError ? err.code : "internal";
    const message = err instanceof Error ? err.message : String(err);
    await this.#write(aborted ? "interrupted" : "failed", null, code, message);
  }

  async #write(
    status: SyncRunStatus,
    counts: Record<string, number> | null,
    failureCode: string | null,
    error: string | null,
  ): Promise<void> {
    const at = new Date();
    const record: SyncRunRecord = {
      runId: this.#about.runId,
      resource: this.#about.kind,
      startedAt: this.#startedAt,
      finishedAt: at,
      status,
      pages: 0,
      rows: counts?.rowsRead ?? 0,
      requests: counts?.requests ?? 0,
      error,
      kind: this.#about.kind,
      job: this.#about.job,
      file: this.#about.file,
      fileHash: this.#fileHash,
      counts,
      failureCode,
    };
    const t0 = performance.now();
    try {
      this.people?.close();
      const logged = await this.#loader.finish(record, this.people?.parts ?? [], at);
      this.#logger?.info(
        { job: this.#about.job, runId: this.#about.runId, logged, ms: Math.round(performance.now() - t0) },
        "sync log written",
      );
    } catch (err) {
      this.#logger?.warn(
        {
          job: this.#about.job,
          runId: this.#about.runId,
          err: err instanceof Error ? err.message : String(err),
        },
        "the run's sync log could not be written to the warehouse; the import itself is unaffected",
      );
    } finally {
      if (this.people) await this.#loader.abandon(this.people.files);
    }
  }
}
