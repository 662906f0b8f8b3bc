import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/emulator/index.ts";
import { type ExportFixture, exportFixture } from "./export-fixture.ts";

const DAY = 86_400_000;

async function admin(fx: ExportFixture, path: string, body: unknown, method = "POST"): Promise<void> {
  const res = await fx.emu.admin(path, { method, body });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
}

describe("the email high-water mark and a message dated in the future", () => {
  let fx: ExportFixture;
  beforeEach(async () => {
    fx = await exportFixture("duckdb", { sizes: { emailMessages: 60 } });
  });
  afterEach(async () => fx.cleanup());

  it("stops the mark at now, so the next run still loads what was sent before that future date", async () => {
    const def = { resources: ["email_messages" as const], emails: { backfillDays: 30, lookbackHours: 24 } };
    const now = await fx.serviceNow();
    const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
    const snap: Snapshot = await fx.emu.snapshot();
    const template = snap.emailMessages[0]!;
    const future = { ...template, id: "email_future", sentAt: at(5 * DAY) };
    await admin(fx, "/snapshot", { ...snap, emailMessages: [...snap.emailMessages, future] }, "PUT");
    // The service answers with messages up to its own clock: ahead of ours, it hands us one dated in our future.
    await admin(fx, "/clock", { now: at(5 * DAY + 3_600_000) });

    await fx.run(def, { now: () => now });
    const first = new Set((await fx.sink.readTable("email_messages")).map((r) => r.id));
    expect(first.has("email_future")).toBe(true);
    const mark = (await fx.sink.readState("email_messages")) as { highWater: string };
    expect(Date.parse(mark.highWater)).toBeLessThanOrEqual(now.getTime());

    // Three days on, clocks agree; a message was sent a day after the first run, before the future date.
    await admin(fx, "/clock", { now: at(3 * DAY) });
    const after = { ...template, id: "email_after", sentAt: at(DAY) };
    const current: Snapshot = await fx.emu.snapshot();
    await admin(fx, "/snapshot", { ...current, emailMessages: [...current.emailMessages, after] }, "PUT");

    await fx.run(def);
    const second = new Set((await fx.sink.readTable("email_messages")).map((r) => r.id));
    expect(second.has("email_after")).toBe(true);
    const next = (await fx.sink.readState("email_messages")) as { highWater: string };
    expect(Date.parse(next.highWater)).toBeLessThanOrEqual(Date.parse(at(3 * DAY)));
  });
});
