import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { RunImportOptions } from "./import-options.ts";
import { PersonStore } from "./person-store.ts";
import type { CsvSource } from "./read-records.ts";
import { RejectsWriter } from "./rejects-writer.ts";
import { RequestsWriter } from "./requests-writer.ts";
import { RunWarnings } from "./run-warnings.ts";
import { openSpillFolder } from "./spill-folder.ts";

/**
 * What a run writes and lives only as long as the run: its private spill
 * folder with the person store, the rejects file, the dry run's requests file
 * and the warnings log. The phases write to them; `close` closes them all and
 * removes the folder, whether the run ended well or not.
 */
export class RunFiles {
  readonly #work: string;
  readonly store: PersonStore;
  readonly rejects: RejectsWriter;
  readonly requests: RequestsWriter;
  /** Dropped values and phones without a country: noted per row, written out at the end (run-warnings.ts). */
  readonly warnings: RunWarnings;

  private constructor(work: string, store: PersonStore, options: RunImportOptions, csv: CsvSource) {
    this.#work = work;
    this.store = store;
    this.rejects = new RejectsWriter(options.rejectsFile, undefined, {
      delimiter: csv.delimiter,
      bom: csv.bom,
    });
    this.requests = new RequestsWriter(options.dryRun ? (options.requestsFile ?? null) : null);
    this.warnings = new RunWarnings({
      workDir: work,
      policy: options.definition.invalidOptionalValues ?? "drop",
    });
  }

  static async open(options: RunImportOptions, csv: CsvSource): Promise<RunFiles> {
    const work = await openSpillFolder({
      root: options.workDir ?? path.join(tmpdir(), "recruit-sync-spill"),
      ...(options.lockKey ? { lockKey: options.lockKey } : {}),
      ...(options.ledger ? { redis: options.ledger.redis } : {}),
    });
    try {
      // What moves the spill's folder: the CLI and the workers put it under paths.dataDir.
      const setting = options.workDir ? "paths.dataDir in the configuration" : "TMPDIR";
      const identifier = options.definition.target.identifier;
      const store = await PersonStore.create(path.join(work, "rows.spill"), identifier, setting);
      return new RunFiles(work, store, options, csv);
    } catch (err) {
      await rm(work, { recursive: true, force: true });
      throw err;
    }
  }

  async close(): Promise<void> {
    this.warnings.close();
    await this.store.close().catch(() => {});
    await this.rejects.close().catch(() => {});
    await this.requests.close().catch(() => {});
    await rm(this.#work, { recursive: true, force: true });
  }
}
