import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { ApiClient } from "../api/index.ts";
import type { ImportJobDefinition } from "../config/import-job.ts";
import type { BatchEntry } from "./batch.ts";
import type { ImportProgress } from "./report.ts";
import type { RowProblem } from "./row-problem.ts";
import type { BatchResult } from "./send-phase.ts";

export interface BatchProgress {
  index: number;
  people: number;
  /** true when a previous run had finished this batch and it was not sent. */
  resumed: boolean;
  imported: number;
  rejected: number;
}

export interface RunImportOptions {
  file: string;
  definition: ImportJobDefinition;
  /** Name for the report; defaults to the definition's name, else the file's. */
  job?: string;
  /** Required unless dryRun. */
  client?: ApiClient;
  /** Everything but the calls; the bodies go to `requestsFile`. */
  dryRun?: boolean;
  requestsFile?: string;
  /** Where rejected rows go; created only when a row is rejected. */
  rejectsFile: string;
  /** Values `invalidOptionalValues: drop` left out of imported people; default beside the rejects. */
  warningsFile?: string;
  /** The ledger in Redis; without it a run cannot resume or recognise a file it has imported. */
  ledger?: { redis: Redis; prefix: string; ttlSeconds?: number };
  /** Import again a file the ledger says is done, from the first batch. */
  force?: boolean;
  /**
   * Change-only sending (sent-state.ts): people whose mapped data is what the
   * last successful run sent for the same service, token, study, population,
   * identifier and mapping are not sent; `full` sends everyone and records
   * them. Without it everyone is sent and nothing is recorded.
   */
  changes?: ChangeOnlyOptions;
  /** Why change-only sending cannot work this run (no Redis, no token): one warning line; everyone is sent. */
  changesUnavailable?: string;
  /**
   * The file's content hash when the caller already took it (for the run lock's key): the ledger and the
   * lock then name the same bytes, and a large file is not read twice before its first row.
   */
  fileHash?: string;
  /**
   * The folder under which the run makes its private spill folder: `<dataDir>/spill` for the CLI and the workers;
   * default `recruit-sync-spill` in the OS temp directory. Stale spill folders there are removed at start (spill-folder.ts).
   */
  workDir?: string;
  /** The run lock the caller holds for this import (`importLockKey`): names the spill folder, so a rerun finds it. */
  lockKey?: string;
  /** Parse on a worker thread; by default only files of a few megabytes and more are. */
  parseInWorker?: boolean;
  /**
   * Import requests in flight at once, each through the rate governor
   * (config `imports.concurrency`, which the CLI and the workers pass). 1, one
   * after another, when not given. A dry run writes its requests in order.
   */
  concurrency?: number;
  /**
   * Import requests in flight while a rate quota binds (config
   * `imports.concurrencyUnderQuota`), when more than `concurrency`
   * (batch-sizing.ts, inFlightLimit).
   */
  concurrencyUnderQuota?: number;
  /**
   * The most people a request may carry (config `imports.maxBatchSize`), for
   * a service whose limit is lower than the contract's 1,000 (batch-sizing.ts).
   */
  maxBatchSize?: number;
  /**
   * The quota per window the rate governor has seen for this token and
   * service (X-RateLimit-Limit), undefined while it has seen none: under a
   * binding quota requests carry the most people (batch-sizing.ts). Without
   * it batches are of the definition's size.
   */
  quota?: () => Promise<number | undefined>;
  /**
   * Stops the run, which ends `interrupted`: nothing more is read or sent, but
   * the requests already sent are answered and recorded in the ledger before
   * it ends (send-phase.ts), so the resume sends none the service answered.
   * They are waited for until `abandon`, or the client's own timeout.
   */
  signal?: AbortSignal;
  /**
   * After a stop, gives up on the answers still awaited: their requests are
   * aborted, and the resume sends their batches again (the stop's deadline).
   */
  abandon?: AbortSignal;
  onBatch?: (progress: BatchProgress) => void | Promise<void>;
  /**
   * Where the run is, from its first byte: called after every megabyte hashed,
   * every chunk of rows read and every batch sent. Callers throttle.
   */
  onProgress?: (progress: ImportProgress) => void;
  /** Phases and counts only: never a person's data. */
  logger?: Logger;
  /** Hears each person's fate for the run's sync log (src/synclog/person-log.ts). */
  personLog?: {
    batch(result: BatchResult): void;
    held(entry: BatchEntry): void;
    refused(row: number, problems: readonly RowProblem[]): void;
    /** Every batch is answered: what is left of the log can be loaded while the run finishes. */
    sent?(): void;
  };
}

export interface ChangeOnlyOptions {
  redis: Redis | Cluster;
  /** The configured key prefix; the state lives under `<prefix>:sent:`. */
  prefix: string;
  /** The service the people go to, and a fingerprint of the token (tokenFingerprint), never the token. */
  service: { baseUrl: string; tokenFingerprint: string };
  /** Send everyone (`--full`, the job's `changesOnly: false`), and record what was sent. */
  full?: boolean;
  ttlSeconds?: number;
}
