import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { startEmulatorChild } from "./cli-child.ts";

const HUGE = { people: 5_000_000, studies: 10_000, participantsPerStudy: 1_000_000 };

let emu: TestEmulator | undefined;
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

describe("PUT /__emulator/snapshot", () => {
  it("refuses a body that is not a snapshot with 400 naming the path, and keeps the store", async () => {
    emu = await startTestEmulator({ sizes: { people: 8 } });
    const before = await emu.snapshot();
    const put = async (body: unknown) => {
      const res = await emu?.admin("/snapshot", { method: "PUT", body });
      return { status: res?.status, json: (await res?.json()) as { errors: { path: unknown[] }[] } };
    };

    const unknownKey = await put({ a: 1 });
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.json.errors).toEqual([{ message: 'Unknown key "a"', path: ["a"] }]);

    const empty = await put({});
    expect(empty.status).toBe(400);
    expect(empty.json.errors[0]?.path).toEqual([]);

    const notAnObject = await put([1, 2]);
    expect(notAnObject.status).toBe(400);

    const person = before.people[0];
    const badEmail = await put({ ...before, people: [{ ...person, email: 42 }] });
    expect(badEmail.status).toBe(400);
    expect(badEmail.json.errors.map((e) => e.path)).toEqual([["people", 0, "email"]]);

    const extra = await put({ ...before, peeple: [] });
    expect(extra.status).toBe(400);
    expect(extra.json.errors.map((e) => e.path)).toEqual([["peeple"]]);

    const after = await emu.snapshot();
    expect(after.people).toHaveLength(8);
    expect(after).toEqual(before);
  });
});

describe("POST /__emulator/seed", () => {
  it("refuses sizes the process cannot hold with 400 at once, and keeps the store", async () => {
    // A child process: before the bound, this seed blocked its process until it died out of memory.
    const emulator = startEmulatorChild(["--people", "7"]);
    children.push(emulator.child);
    const banner = await emulator.banner();
    const origin = /Admin API: (http:\/\/\S+)\/__emulator/.exec(banner)?.[1] ?? "";
    const authorization = `Bearer ${/Admin token: (\S+)/.exec(banner)?.[1]}`;
    const res = await fetch(`${origin}/__emulator/seed`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization },
      body: JSON.stringify({ sizes: HUGE }),
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { message: string; path: string[] }[] };
    expect(body.errors[0]?.path).toEqual(["sizes"]);
    expect(body.errors[0]?.message).toMatch(/needs about [\d,]+ TB, more than the [\d,]+ [MG]B allowed/);

    const snap = await fetch(`${origin}/__emulator/snapshot`, {
      headers: { authorization },
      signal: AbortSignal.timeout(5000),
    });
    expect(((await snap.json()) as { people: unknown[] }).people).toHaveLength(7);
    // The refused sizes did not become the baseline either.
    await fetch(`${origin}/__emulator/reset`, {
      method: "POST",
      headers: { authorization },
      signal: AbortSignal.timeout(5000),
    });
    const again = await fetch(`${origin}/__emulator/snapshot`, {
      headers: { authorization },
      signal: AbortSignal.timeout(5000),
    });
    expect(((await again.json()) as { people: unknown[] }).people).toHaveLength(7);
  });

  it("bounds seeds by maxSeedMemoryMb when one is configured", async () => {
    emu = await startTestEmulator({ sizes: { people: 4 }, maxSeedMemoryMb: 20 });
    const refused = await emu.admin("/seed", { body: { sizes: { people: 100_000 } } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("maxSeedMemoryMb");
    const accepted = await emu.admin("/seed", { body: { sizes: { people: 1000 } } });
    expect(accepted.status).toBe(200);
    expect((await emu.snapshot()).people).toHaveLength(1000);
  });

  it("refuses the same sizes as CLI flags with exit 2 and one line", async () => {
    const emulator = startEmulatorChild([
      "--people",
      String(HUGE.people),
      "--studies",
      String(HUGE.studies),
      "--participants-per-study",
      String(HUGE.participantsPerStudy),
    ]);
    children.push(emulator.child);
    const code = await emulator.exit(10_000);
    expect(code).toBe(2);
    expect(emulator.output()).toMatch(/^recruit-sync: a seed of 5,000,000 people .* seed fewer\n$/);
  });
});
