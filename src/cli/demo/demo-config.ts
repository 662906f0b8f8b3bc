import { randomBytes } from "node:crypto";
import path from "node:path";
import { loadConfig, type RuntimeConfig } from "../../config/index.ts";
import { anchorWarehouseUrl } from "../../sinks/warehouse-url.ts";

/** The sample files, the job that imports each, in the order the demo drops them. */
export const DEMO_SAMPLES = [
  { job: "hubspot-contacts", file: "samples/hubspot-contacts.csv" },
  { job: "salesforce-contacts", file: "samples/salesforce-contact-report.csv" },
  { job: "mailchimp-audience", file: "samples/mailchimp-audience.csv" },
  // Last: it opts out people the HubSpot file brings in.
  { job: "opt-out-list", file: "samples/opt-out-list.csv" },
] as const;

/** The export whose job scheduler (`schedule-<name>`) way 2 runs now. */
export const DEMO_EXPORT_JOB = "nightly-export";

/** Way 3: what `recruit-sync import` would enqueue — the HubSpot sample with its job, into another study. */
export const DEMO_CLI_IMPORT = {
  file: "samples/hubspot-contacts.csv",
  job: "hubspot-contacts",
  study: "study_5",
} as const;

/** The demo's own folder under the project: watched folders, reports, rejects, its log. Cleared at each start. */
export const DEMO_DIR = "data/demo";

export interface DemoConfigInput {
  root: string;
  serviceBaseUrl: string;
  token: string;
  redisUrl: string;
  /** Default the configuration's (duckdb:./data/warehouse.duckdb). */
  warehouse: string | undefined;
  opsPort: number;
}

/** A prefix of its own for every run: the demo never touches another run's (or production's) keys. */
export function demoPrefix(): string {
  return `recruit-sync-demo-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
}

/**
 * The configuration the demo's worker and ops server run on: the project's
 * config/ with the emulator as the service, the Redis found, a prefix of its
 * own, a watched folder per sample job under data/demo/inbox/, and the ops
 * server on loopback without basic auth.
 */
export function demoConfig(input: DemoConfigInput): RuntimeConfig {
  const demoDir = path.join(input.root, DEMO_DIR);
  const base = loadConfig({ configDir: path.join(input.root, "config") });
  return loadConfig({
    configDir: path.join(input.root, "config"),
    overrides: {
      service: { baseUrl: input.serviceBaseUrl, token: input.token },
      redis: { url: input.redisUrl, prefix: demoPrefix() },
      warehouse: { url: anchorWarehouseUrl(input.warehouse ?? base.warehouse.url, input.root) },
      paths: { dataDir: demoDir },
      // Watched files are taken once their size holds still this long; the samples are copied in one go.
      watch: DEMO_SAMPLES.map((s) => ({
        folder: path.join(demoDir, "inbox", s.job),
        job: s.job,
        stableMs: 200,
      })),
      // Loopback only, so the demo's dashboard needs no password; `recruit-sync ops` keeps auth on.
      ops: { host: "127.0.0.1", port: input.opsPort, auth: false },
      // A failing demo should say so within seconds, not retry for minutes.
      queue: { attempts: 2, backoffMs: 1000, shutdownDeadlineMs: 10_000 },
    } as never,
  });
}
