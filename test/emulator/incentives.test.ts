import { afterEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("GET /incentives/{incentiveId}", () => {
  it("returns an incentive with every field of the spec", async () => {
    emu = await startTestEmulator({ clock: "2026-06-01T00:00:00.000Z" });
    const i = await emu.client.getIncentive("incentive_1");
    expect(i).toMatchObject({
      incentiveId: "incentive_1",
      type: "MONEY_OR_GIFT_CARD",
      status: "UNCLAIMED",
      sentAt: "2026-03-15T10:00:00.000Z",
      amountCents: expect.any(Number),
      recipientEmail: expect.stringContaining("@"),
      personId: expect.any(String),
      participantId: expect.any(String),
      studyId: expect.any(String),
      budgetId: expect.any(String),
    });
    const custom = await emu.client.getIncentive("incentive_7");
    expect(custom).toMatchObject({
      type: "CUSTOM",
      status: "SENT",
      customIncentiveId: expect.any(String),
      customIncentiveValue: expect.any(String),
    });
  });

  it("expires an unclaimed incentive sent after 2026-01-31 once it is a year old on the emulator's clock", async () => {
    emu = await startTestEmulator({ clock: "2027-03-15T09:59:59.000Z" });
    expect((await emu.client.getIncentive("incentive_1")).status).toBe("UNCLAIMED");
    await emu.admin("/clock", { body: { now: "2027-03-15T10:00:00.000Z" } });
    expect((await emu.client.getIncentive("incentive_1")).status).toBe("EXPIRED");
    // Sent on 2026-01-31 (not after it) or before: never expires.
    await emu.admin("/clock", { body: { advance: "3y" } });
    expect((await emu.client.getIncentive("incentive_2")).status).toBe("UNCLAIMED");
    expect((await emu.client.getIncentive("incentive_9")).status).toBe("UNCLAIMED");
    // The first moment after the day counts; claimed ones stay claimed.
    expect((await emu.client.getIncentive("incentive_10")).status).toBe("EXPIRED");
    expect((await emu.client.getIncentive("incentive_3")).status).toBe("CLAIMED");
    expect((await emu.snapshot()).incentives.find((i) => i.incentiveId === "incentive_1")?.status).toBe(
      "EXPIRED",
    );
  });

  it("answers 404 Incentive not found", async () => {
    emu = await startTestEmulator();
    const res = await raw(emu, "GET", "/incentives/incentive_99999");
    expect([res.status, res.text]).toEqual([404, "Incentive not found"]);
    expect(res.contentType).toMatch(/^text\/plain/);
  });
});

describe("GET /incentives/custom/{customIncentiveId}", () => {
  it("returns each type of custom incentive", async () => {
    emu = await startTestEmulator();
    const types = [];
    for (let i = 1; i <= 4; i++) {
      const c = await emu.client.getCustomIncentive(`custom_incentive_${i}`);
      expect(c).toMatchObject({
        customIncentiveId: `custom_incentive_${i}`,
        name: expect.any(String),
        description: expect.any(String),
      });
      types.push(c.type);
    }
    expect(types).toEqual(["STRING", "NUMBER", "MONETARY", "SINGLE_SELECT"]);
    expect((await emu.client.getCustomIncentive("custom_incentive_4")).options).toEqual([
      { name: "T-shirt" },
      { name: "Mug" },
      { name: "Tote bag" },
    ]);
  });

  it("answers 404 Custom incentive not found", async () => {
    emu = await startTestEmulator();
    const res = await raw(emu, "GET", "/incentives/custom/nope");
    expect([res.status, res.text]).toEqual([404, "Custom incentive not found"]);
  });
});
