import { describe, expect, it } from "vitest";
import type { RecruitSyncError } from "../../src/errors/index.ts";
import { ImportReport } from "../../src/imports/index.ts";
import { importHarness, simpleDefinition } from "./fixtures.ts";

const h = importHarness();

function csv(rows: number): string {
  const lines = ["Email,Name"];
  for (let i = 0; i < rows; i++) lines.push(`stop${i}@example.com,P${i}`);
  return `${lines.join("\n")}\n`;
}

describe("an import stopped with requests on the wire", () => {
  it("waits for their answers and records them, so the rerun sends only the batches never sent", async () => {
    const file = await h.s.file("stopped.csv", csv(1000));
    const definition = simpleDefinition({ batchSize: 50 });
    await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [200, 500] } });
    const stop = new AbortController();
    let counted = 0;
    const err = await h
      .run(file, definition, {
        concurrency: 4,
        signal: stop.signal,
        onBatch: () => {
          if (++counted === 3) stop.abort(new Error("stopped by the test"));
        },
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "interrupted", retryable: true });
    const report = ImportReport.parse((err as RecruitSyncError).report);
    // The three batches before the stop, and those on the wire then, answered after it.
    expect(report.batches).toBeGreaterThan(3);
    expect(await h.importCalls()).toBe(report.batches);

    await h.emu.admin("/faults", { method: "DELETE" });
    const rerun = await h.run(file, definition);
    expect(rerun.batchesResumed).toBe(report.batches);
    expect(rerun.imported).toBe(1000);
    // Twenty batches, each sent once.
    expect(await h.importCalls()).toBe(20);
  });

  it("gives up on the answers once abandoned: the run ends without them", async () => {
    const file = await h.s.file("abandoned.csv", csv(200));
    await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 5000 } });
    const stop = new AbortController();
    const abandon = new AbortController();
    let sending = false;
    const run = h.run(file, simpleDefinition({ batchSize: 50 }), {
      signal: stop.signal,
      abandon: abandon.signal,
      onProgress: (p) => {
        if (p.phase !== "send" || sending) return;
        sending = true;
        // Once the first requests are on the wire (the emulator holds them 5 s).
        setTimeout(() => {
          stop.abort(new Error("stopped by the test"));
          abandon.abort(new Error("deadline"));
        }, 200);
      },
    });
    const err = await run.catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "interrupted", retryable: true });
    // Ended before the service answered any of them: nothing was counted or recorded.
    expect(ImportReport.parse((err as RecruitSyncError).report).imported).toBe(0);
    expect(await h.importCalls()).toBe(0);
  });
});
