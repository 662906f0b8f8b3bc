import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ExportJobDefinitionInput,
  type ExportResource,
  validateExportJobDefinition,
} from "../../src/config/export-job.ts";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { type RunExportOptions, RunReport, runExport } from "../../src/exports/index.ts";
import { type Commit, type CommitResult, createSink, type Sink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator, type TestEmulatorOptions } from "../helpers/emulator.ts";
import { withTestSchema } from "../helpers/postgres.ts";

export type SinkKind = "duckdb" | "postgres" | "file";

/**
 * A warehouse owned by one test: a DuckDB file in a temp dir, a fresh
 * PostgreSQL schema, or a file warehouse (`file:<dir>`) in a temp dir.
 */
export interface TestWarehouse {
  url: string;
  open(): Promise<Sink>;
  cleanup(): Promise<void>;
}

export async function testWarehouse(kind: SinkKind): Promise<TestWarehouse> {
  if (kind === "postgres") {
    const schema = await withTestSchema();
    return { url: schema.url, open: () => createSink(schema.url), cleanup: () => schema.cleanup() };
  }
  const dir = await mkdtemp(join(tmpdir(), "recruit-sync-export-"));
  const url = kind === "file" ? `file:${dir}` : `duckdb:${join(dir, "warehouse.duckdb")}`;
  return { url, open: () => createSink(url), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function definition(input: Omit<ExportJobDefinitionInput, "kind">) {
  const result = validateExportJobDefinition({ kind: "export", name: "test", ...input });
  if (!result.ok) throw new Error(`bad test definition: ${JSON.stringify(result.problems)}`);
  return result.definition;
}

export interface ExportFixture {
  emu: TestEmulator;
  sink: Sink;
  warehouse: TestWarehouse;
  /** The emulator's clock, which the email window is computed against. */
  serviceNow(): Promise<Date>;
  run(
    input: Omit<ExportJobDefinitionInput, "kind">,
    extra?: Partial<Omit<RunExportOptions, "definition" | "client" | "sink">> & {
      resources?: ExportResource[];
    },
  ): Promise<RunReport>;
  cleanup(): Promise<void>;
}

export async function exportFixture(
  kind: SinkKind = "duckdb",
  emulatorOptions: TestEmulatorOptions = {},
): Promise<ExportFixture> {
  const emu = await startTestEmulator(emulatorOptions);
  const warehouse = await testWarehouse(kind);
  const sink = await warehouse.open();
  const serviceNow = async () => {
    const res = await emu.admin("/clock");
    return new Date(((await res.json()) as { now: string }).now);
  };
  return {
    emu,
    sink,
    warehouse,
    serviceNow,
    async run(input, extra = {}) {
      const now = await serviceNow();
      return settled(
        runExport({ definition: definition(input), client: emu.client, sink, now: () => now, ...extra }),
      );
    },
    async cleanup() {
      await sink.close();
      await emu.close();
      await warehouse.cleanup();
    },
  };
}

/**
 * A table's contents without what differs between two correct runs: when
 * and by which run a row was written, and when it was marked deleted.
 */
export function comparable(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map(({ _synced_at, _run_id, _deleted_at, ...rest }) => ({
    ...rest,
    deleted: _deleted_at !== null,
  }));
}

/**
 * The report of a run whether it succeeded or not: a failed run throws a
 * RecruitSyncError carrying its report, and these tests look at the report.
 */
export async function settled(run: Promise<RunReport>): Promise<RunReport> {
  try {
    return await run;
  } catch (err) {
    const report = err instanceof RecruitSyncError ? RunReport.safeParse(err.report) : undefined;
    if (!report?.success) throw err;
    return report.data;
  }
}

/** `sink` with its commits going through `commit` (which may call the real one): for failures and delays. */
export function withCommit(sink: Sink, commit: (c: Commit) => Promise<CommitResult>): Sink {
  return {
    kind: sink.kind,
    displayUrl: sink.displayUrl,
    prepare: (t) => sink.prepare(t),
    readState: (s) => sink.readState(s),
    readKeys: (q) => sink.readKeys(q),
    readTable: (t) => sink.readTable(t),
    readRuns: () => sink.readRuns(),
    close: () => sink.close(),
    commit,
  };
}
