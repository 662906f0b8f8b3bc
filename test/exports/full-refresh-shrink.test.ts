import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateExportJobDefinition } from "../../src/config/export-job.ts";
import { runExport } from "../../src/exports/index.ts";
import { createSink, type Sink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";

let emu: TestEmulator | undefined;
let sink: Sink | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sink?.close();
  await emu?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  emu = sink = dir = undefined;
});

describe("a full refresh whose collection shrinks under it", () => {
  it("soft-deletes exactly the participants who left, when a killed pass is resumed after some left", async () => {
    emu = await startTestEmulator({ sizes: { people: 2000, participantsPerStudy: 100 } });
    dir = await mkdtemp(join(tmpdir(), "shrink-"));
    sink = await createSink(`duckdb:${join(dir, "w.duckdb")}`);
    const def = validateExportJobDefinition({
      kind: "export",
      name: "shrink",
      resources: ["participants"],
      studies: ["study_5"],
      pageSize: 10,
    });
    if (!def.ok) throw new Error(JSON.stringify(def.problems));
    const base = { definition: def.definition, client: emu.client, sink, checkpointRows: 10 };

    await runExport(base);
    // The next night is killed after 5 checkpoints: its pass and cursor stay saved.
    const ac = new AbortController();
    let checkpoints = 0;
    await runExport({
      ...base,
      signal: ac.signal,
      onCheckpoint: () => {
        if (++checkpoints === 5) ac.abort(new Error("killed"));
      },
    });
    // Three participants the killed pass had already read leave the study.
    const inStudy = emu.emulator.store.participants.get("study_5")!;
    const left = inStudy.list.splice(10, 3);
    for (const p of left) inStudy.byPerson.delete(p.personId);

    const resumed = await runExport(base);
    expect(resumed.resources.participants?.status).toBe("succeeded");

    const live = new Set(inStudy.list.map((p) => p.participantId));
    const rows = await sink.readTable("participants");
    const deleted = rows.filter((r) => r._deleted_at !== null).map((r) => r.participant_id as string);
    expect(deleted.sort()).toEqual(left.map((p) => p.participantId).sort());
    expect(rows.filter((r) => r._deleted_at === null && live.has(r.participant_id as string))).toHaveLength(
      live.size,
    );
  });
});
