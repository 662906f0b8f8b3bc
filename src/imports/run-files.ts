import { rm } from "node:fs/promises";
import type { PersonStore } from "./person-store.ts";
import type { RejectsWriter } from "./rejects-writer.ts";
import type { RequestsWriter } from "./requests-writer.ts";
import type { RunWarnings } from "./run-warnings.ts";

/**
 * What a run writes and lives only as long as the run (opened by
 * open-run-files.ts): its private spill folder with the person store, the
 * rejects file, the dry run's requests file and the warnings log. The phases
 * write to them; `close` closes them all and removes the folder, whether the
 * run ended well or not.
 */
export class RunFiles {
  readonly #work: string;
  readonly store: PersonStore;
  readonly rejects: RejectsWriter;
  readonly requests: RequestsWriter;
  /** Dropped values and phones without a country: noted per row, written out at the end (run-warnings.ts). */
  readonly warnings: RunWarnings;

  constructor(
    work: string,
    files: { store: PersonStore; rejects: RejectsWriter; requests: RequestsWriter; warnings: RunWarnings },
  ) {
    this.#work = work;
    this.store = files.store;
    this.rejects = files.rejects;
    this.requests = files.requests;
    this.warnings = files.warnings;
  }

  async close(): Promise<void> {
    this.warnings.close();
    await this.store.close().catch(() => {});
    await this.rejects.close().catch(() => {});
    await this.requests.close().catch(() => {});
    await rm(this.#work, { recursive: true, force: true });
  }
}
