import { ApiError } from "../api/index.ts";
import { RecruitSyncError } from "../errors/index.ts";

/** What stopped the run: the one line that says what to check, and the failure behind it. */
export interface Stop {
  message: string;
  err: unknown;
}

/**
 * A failure that every other resource would meet too: the token refused, a
 * permission missing, the service out of reach. The run stops at once with
 * one line saying what to check, instead of trying each resource in turn.
 */
function stopsTheRun(err: unknown, baseUrl: string): string | undefined {
  // The queue pauses a job whose rate budget is spent for long: every resource would wait the same.
  if (err instanceof RecruitSyncError && err.code === "budget_paused") return err.message;
  // A base URL that does not lead to the service fails every resource alike.
  if (err instanceof RecruitSyncError && err.code === "service_address") return err.message;
  if (!(err instanceof ApiError)) return undefined;
  switch (err.code) {
    case "unauthorized":
      return `the service refused the API token (401 at ${err.operationId}): check RECRUIT_SYNC_API_TOKEN`;
    case "forbidden":
      return `the API token lacks a permission (403 at ${err.operationId}): give the token that permission or leave that resource out`;
    case "network_error":
    case "timeout":
      return `the service at ${baseUrl} cannot be reached (${err.message}): check RECRUIT_SYNC_BASE_URL and that the service is up`;
    default:
      return undefined;
  }
}

/**
 * The run's own signal: the caller's abort, or a failure that stops every
 * stream. It also keeps the first failure of any resource, the cause a
 * failed run ends with. `dispose()` once the streams are done.
 */
export class RunStop {
  readonly #run = new AbortController();
  readonly #baseUrl: string;
  readonly #onAbort = (): void => this.#run.abort(this.caller?.reason);
  #stop: Stop | undefined;
  #firstFailure: unknown;

  constructor(
    /** The caller's signal: its abort interrupts the run. */
    readonly caller: AbortSignal | undefined,
    baseUrl: string,
  ) {
    this.#baseUrl = baseUrl;
    if (caller?.aborted) this.#onAbort();
    else caller?.addEventListener("abort", this.#onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#run.signal;
  }

  /** Set once a failure every stream would meet stopped the run. */
  get stop(): Stop | undefined {
    return this.#stop;
  }

  get firstFailure(): unknown {
    return this.#firstFailure;
  }

  /** Stops the run if `err` is a failure every stream would meet. */
  readonly stopOn = (err: unknown): void => {
    if (this.#run.signal.aborted) return;
    const why = stopsTheRun(err, this.#baseUrl);
    if (why === undefined) return;
    this.#stop = { message: why, err };
    this.#run.abort(err);
  };

  /** A resource failed: the first such failure is the run's cause. */
  failed(err: unknown): void {
    this.#firstFailure ??= err;
  }

  dispose(): void {
    this.caller?.removeEventListener("abort", this.#onAbort);
  }
}
