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

describe("the email backfill while the service's clock moves on", () => {
  it("loses no message of the window although messages slide out of it between pages", async () => {
    emu = await startTestEmulator({ sizes: { emailMessages: 4000 } });
    warehouse = await testWarehouse("duckdb");
    sink = await warehouse.open();
    const def = definition({
      resources: ["email_messages"],
      pageSize: 100,
      emails: { backfillDays: 30 },
    });
    const clock = emu.emulator.clock;
    const now = () => new Date(clock.now());
    const started = clock.now();
    let checkpoints = 0;
    // Each checkpoint, two hours pass on the service: a slow, rate-limited backfill.
    await runExport({
      definition: def,
      client: emu.client,
      sink,
      now,
      checkpointRows: 100,
      onCheckpoint: () => {
        checkpoints++;
        clock.advance(2 * 3_600_000);
      },
    });
    // Every message still inside the window at the end was sent within it at the start, and must be there.
    const snapshot = (await emu.snapshot()) as { emailMessages: { id: string; sentAt: string }[] };
    const windowStart = clock.now() - 30 * 86_400_000;
    const expected = snapshot.emailMessages.filter(
      (m) => Date.parse(m.sentAt) >= windowStart && Date.parse(m.sentAt) <= started,
    );
    expect(checkpoints).toBeGreaterThan(5);
    expect(expected.length).toBeGreaterThan(100);
    const loaded = new Set((await sink.readTable("email_messages")).map((r) => r.id as string));
    expect(expected.filter((m) => !loaded.has(m.id)).map((m) => m.id)).toEqual([]);
  });

  it("moves the mark to the newest sentAt loaded when it read the window again, as a resumed run would", async () => {
    emu = await startTestEmulator({ sizes: { emailMessages: 300 } });
    warehouse = await testWarehouse("duckdb");
    sink = await warehouse.open();
    const def = definition({ resources: ["email_messages"], pageSize: 10, emails: { backfillDays: 30 } });
    const now = new Date(emu.emulator.clock.now());
    const messages = emu.emulator.store.emailMessages;
    const inWindow = messages.filter(
      (m) =>
        m.sentAt &&
        Date.parse(m.sentAt) <= now.getTime() &&
        Date.parse(m.sentAt) > now.getTime() - 29 * 86_400_000,
    );
    const newest = inWindow.reduce((a, b) => (Date.parse(b.sentAt!) > Date.parse(a.sentAt!) ? b : a));
    // The newest message on the first page, then deleted once that page is committed: the window shrinks under the pass.
    messages.splice(messages.indexOf(newest), 1);
    messages.unshift(newest);
    let checkpoints = 0;
    const report = await runExport({
      definition: def,
      client: emu.client,
      sink,
      now: () => now,
      checkpointRows: 10,
      onCheckpoint: () => {
        if (++checkpoints === 1) messages.splice(messages.indexOf(newest), 1);
      },
    });
    const rows = await sink.readTable("email_messages");
    expect(rows.map((r) => r.id)).toContain(newest.id);
    // The window was read twice.
    expect(report.resources.email_messages?.rows).toBeGreaterThan(rows.length);
    const state = (await sink.readState("email_messages")) as { highWater: string; pass?: unknown };
    // A run killed after the shrink's checkpoint resumes with the newest sentAt it had loaded; reading again in the same run must not forget it.
    expect(state.pass).toBeUndefined();
    expect(Date.parse(state.highWater)).toBe(Date.parse(newest.sentAt!));
  });
});
