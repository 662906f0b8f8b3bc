import { afterEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

interface Entry {
  seq: number;
  at: number;
  route: string;
  status: string;
}

async function journal(since?: number): Promise<Entry[]> {
  if (!emu) throw new Error("no emulator");
  const res = await emu.admin(`/requests/journal${since === undefined ? "" : `?since=${since}`}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Entry[] }).entries;
}

describe("GET /__emulator/requests/journal", () => {
  it("lists answers in the order they were given, from a sequence number on, across a reset", async () => {
    emu = await startTestEmulator({ sizes: { people: 5 } });
    await emu.admin("/requests", { method: "DELETE" });
    await emu.client.getIncentive("incentive_1").catch(() => undefined);
    await emu.client.getIncentive("incentive_none").catch(() => undefined);
    const all = await journal();
    expect(all.map((e) => [e.route, e.status])).toEqual([
      ["getIncentive", "200"],
      ["getIncentive", "404"],
    ]);
    expect(all[1]?.seq).toBeGreaterThan(all[0]?.seq ?? Infinity);
    expect(all[1]?.at).toBeGreaterThanOrEqual(all[0]?.at ?? Infinity);
    expect(await journal(all[0]?.seq)).toEqual([all[1]]);

    await emu.admin("/requests", { method: "DELETE" });
    expect(await journal()).toEqual([]);
    await emu.client.getIncentive("incentive_1").catch(() => undefined);
    const [next] = await journal();
    // Numbers keep rising across a reset, so a reader's mark never points into the new log by mistake.
    expect(next?.seq).toBeGreaterThan(all[1]?.seq ?? Infinity);
  });

  it("refuses a since that is not a number with 400", async () => {
    emu = await startTestEmulator({ sizes: { people: 5 } });
    const res = await emu.admin("/requests/journal?since=soon");
    expect(res.status).toBe(400);
  });
});
