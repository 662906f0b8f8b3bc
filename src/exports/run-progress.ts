import type { ExportResource } from "../config/export-job.ts";
import type { ExportProgress, ResourceReport } from "./run-report.ts";
import type { ResourceCounters } from "./stream-context.ts";

/** Where the run is, one line per resource: what onProgress hears after every move of any of them. */
export class RunProgress {
  readonly #progress: ExportProgress;
  readonly #tell: ((progress: ExportProgress) => void) | undefined;

  constructor(runId: string, tell: ((progress: ExportProgress) => void) | undefined) {
    this.#progress = { kind: "export", runId, resource: null, resources: {} };
    this.#tell = tell;
  }

  moved(
    resource: ExportResource,
    status: "running" | ResourceReport["status"],
    counters: ResourceCounters,
  ): void {
    if (!this.#tell) return;
    this.#progress.resource = resource;
    this.#progress.resources[resource] = { status, pages: counters.pages, rows: counters.rows };
    this.#tell(structuredClone(this.#progress));
  }
}
