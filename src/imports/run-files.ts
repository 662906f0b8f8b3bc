import { rm } from "node:fs/promises";
import type { PersonStore } from "./person-store.ts";
import type { RejectsWriter } from "./rejects-writer.ts";
import type { RequestsWriter } from "./requests-writer.ts";

/**
 * What a run writes and lives only as long as the run (opened by
 * open-run-files.ts): its private spill folder with the person store (and
 * the read phase's warnings log), the rejects file and the dry run's
 * requests file. The phases write to them; `close` closes them all and
 * removes the folder, whether the run ended well or not.
 */
export class RunFiles {
  /** The run's private folder (0700). */
  readonly work: string;
  readonly store: PersonStore;
  readonly rejects: RejectsWriter;
  readonly requests: RequestsWriter;

  constructor(work: string, files: { store: PersonStore; rejects: RejectsWriter; requests: RequestsWriter }) {
    this.work = work;
    this.store = files.store;
    this.rejects = files.rejects;
    this.requests = files.requests;
  }

  async close(): Promise<void> {
    await this.store.close().catch(() => {});
    await this.rejects.close().catch(() => {});
    await this.requests.close().catch(() => {});
    await rm(this.work, { recursive: true, force: true });
  }
}
