import { afterEach, describe, expect, it } from "vitest";
import { runExport } from "../../src/exports/index.ts";
import type { Sink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { definition, type TestWarehouse, testWarehouse } from "./export-fixture.ts";

let emu: TestEmulator | undefined;
let sink: Sink | undefined;
let warehouse: TestWarehouse | undefined;
afterEach(async () => {
  await sink?.close();
  await emu?.close();
  await warehouse?.cleanup();
  emu = sink = warehouse = undefined;
});

describe("a full refresh whose collection shrinks under it", () => {
  it("soft-deletes exactly the participants who left, when a killed pass is resumed after some left", async () => {
    emu = await startTestEmulator({ sizes: { people: 2000, participantsPerStudy: 100 } });
    warehouse = await testWarehouse("duckdb");
    sink = await warehouse.open();
    const def = definition({
      resources: ["participants"],
      studies: ["study_5"],
      pageSize: 10,
    });
    const base = { definition: def, client: emu.client, sink, checkpointRows: 10 };

    await runExport(base);
    // The next night is killed after 5 checkpoints: its pass and cursor stay saved.
    const ac = new AbortController();
    let checkpoints = 0;
    await expect(
      runExport({
        ...base,
        signal: ac.signal,
        onCheckpoint: () => {
          if (++checkpoints === 5) ac.abort(new Error("killed"));
        },
      }),
    ).rejects.toMatchObject({ code: "interrupted", retryable: true });
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
