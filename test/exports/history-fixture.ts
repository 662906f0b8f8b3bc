import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { expect } from "vitest";
import type { ExportJobDefinitionInput } from "../../src/config/export-job.ts";
import { exportTableSchemas, runExport } from "../../src/exports/index.ts";
import { createSink } from "../../src/sinks/index.ts";
import type { TestEmulator } from "../helpers/emulator.ts";
import { definition, type SinkKind, settled, type TestWarehouse } from "./export-fixture.ts";

/** Rows of a query against a warehouse the tests filled, values made plain (timestamps as ISO text). */
export async function queryWarehouse(
  kind: SinkKind,
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  if (kind === "file") throw new Error(`a file warehouse has no SQL to run ${sql}: read it through its sink`);
  if (kind === "postgres") {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // UTC, so that CAST(... AS DATE) in the views means the same day as in DuckDB.
      await client.query("SET TIME ZONE 'UTC'");
      return (await client.query(sql, params)).rows.map(plainRow);
    } finally {
      await client.end();
    }
  }
  const instance = await DuckDBInstance.create(url.replace(/^duckdb:/, ""));
  try {
    const conn = await instance.connect();
    try {
      const reader = await conn.runAndReadAll(sql, params as never);
      return reader.getRowObjectsJS().map(plainRow);
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

function plainRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (v instanceof Date) out[k] = v.toISOString();
    else if (typeof v === "bigint") out[k] = Number(v);
    else if (typeof v === "string" && /^\d+$/.test(v) && k === "participants") out[k] = Number(v);
    else out[k] = v;
  }
  return out;
}

/** A timestamp literal both databases read the same way (UTC). */
export function at(time: Date): string {
  return time.toISOString().replace("T", " ").replace("Z", "");
}

export const HISTORY_JOB: Omit<ExportJobDefinitionInput, "kind"> = {
  resources: ["participants", "person_properties"],
  studies: ["study_1"],
  propertyGroups: ["property_group_1"],
  pageSize: 4,
  history: true,
};

/** One export of `input` into the warehouse, the sink opened and closed around it; resolves with the time after. */
export async function exportOnce(
  emu: TestEmulator,
  warehouse: TestWarehouse,
  input: Omit<ExportJobDefinitionInput, "kind"> = HISTORY_JOB,
): Promise<Date> {
  const sink = await warehouse.open();
  try {
    const report = await settled(
      runExport({ definition: definition(input), client: emu.client, sink, checkpointRows: 5 }),
    );
    expect(report.status).toBe("succeeded");
  } finally {
    await sink.close();
  }
  const done = new Date();
  // Versions of the next export start strictly later than this export's time.
  await new Promise((r) => setTimeout(r, 5));
  return done;
}

interface SnapshotParticipant {
  participantId: string;
  studyId: string;
  status?: string;
  [k: string]: unknown;
}

/** Changes the service's participants through the admin API: the snapshot read, edited, put back. */
export async function editParticipants(
  emu: TestEmulator,
  edit: (participants: SnapshotParticipant[]) => SnapshotParticipant[],
): Promise<void> {
  const snap = (await (await emu.admin("/snapshot")).json()) as { participants: SnapshotParticipant[] };
  snap.participants = edit(snap.participants);
  const res = await emu.admin("/snapshot", { method: "PUT", body: snap });
  if (!res.ok) throw new Error(`PUT /snapshot answered ${res.status}: ${await res.text()}`);
}

/**
 * Every version of every entity, ordered by `key` then valid_from. A file
 * warehouse has no SQL, so its history is read through its sink, as
 * history-files.test.ts does (each row the version as it stands).
 */
export async function historyRows(
  kind: SinkKind,
  url: string,
  table: string,
  key: string,
): Promise<Record<string, unknown>[]> {
  if (kind !== "file") return queryWarehouse(kind, url, `SELECT * FROM ${table} ORDER BY ${key}, valid_from`);
  const sink = await createSink(url);
  try {
    await sink.prepare(exportTableSchemas({ history: true }));
    const rows = await sink.readTable(table);
    const text = (r: Record<string, unknown>) => `${String(r[key])}\u0000${String(r.valid_from)}`;
    return rows.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
  } finally {
    await sink.close();
  }
}

/**
 * The invariants every history must keep whatever happened: per entity,
 * versions that follow each other without overlap, a closed version's end
 * being the next one's start unless the entity was gone in between (then
 * the next starts later), at most one current version and it the last, and
 * consecutive versions that differ.
 */
export function expectWellFormed(rows: Record<string, unknown>[], key: string): void {
  const byKey = new Map<unknown, Record<string, unknown>[]>();
  for (const r of rows) byKey.set(r[key], [...(byKey.get(r[key]) ?? []), r]);
  for (const [id, versions] of byKey) {
    const current = versions.filter((v) => v.is_current);
    expect(current.length, `${String(id)}: current versions`).toBeLessThanOrEqual(1);
    versions.forEach((v, i) => {
      const next = versions[i + 1];
      if (v.is_current) {
        expect(next, `${String(id)}: a version after the current one`).toBeUndefined();
        expect(v.valid_to).toBeNull();
        return;
      }
      expect(v.valid_to, `${String(id)}: a closed version without an end`).not.toBeNull();
      expect(String(v.valid_to) >= String(v.valid_from)).toBe(true);
      if (next) {
        expect(String(next.valid_from) >= String(v.valid_to), `${String(id)}: overlapping versions`).toBe(
          true,
        );
        if (next.valid_from === v.valid_to) expect(next.row_hash).not.toBe(v.row_hash);
      }
    });
  }
}
