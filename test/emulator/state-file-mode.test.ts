import { chmod, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.ts";

let dir: string;
let umask: number;
let emu: RunningEmulator | undefined;
beforeEach(async () => {
  umask = process.umask(0o022);
  dir = await mkdtemp(path.join(tmpdir(), "emulator-state-mode-"));
  await chmod(dir, 0o755);
});
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  process.umask(umask);
  await rm(dir, { recursive: true, force: true });
});

const mode = async (file: string) => (await stat(file)).mode & 0o777;

describe("the --state file", () => {
  it("is written 0600 in a 0755 folder under umask 022, and restored from", async () => {
    const file = path.join(dir, "state.jsonl");
    emu = await startEmulator({ port: 0, host: "127.0.0.1", sizes: { people: 9 }, stateFile: file });
    await emu.saveState();
    expect(await mode(file)).toBe(0o600);
    expect(await mode(dir)).toBe(0o755);
    await emu.close();
    expect(await mode(file)).toBe(0o600);
    // Nothing else (no temporary file) is left beside it.
    expect(await readdir(dir)).toEqual(["state.jsonl"]);

    emu = await startEmulator({ port: 0, host: "127.0.0.1", stateFile: file });
    expect(emu.restoredFromState).toBe(true);
    expect(emu.store.people.size).toBe(9);
  });

  it("replaces a readable file and a leftover temporary file with owner-only ones", async () => {
    const file = path.join(dir, "state.jsonl");
    emu = await startEmulator({ port: 0, host: "127.0.0.1", sizes: { people: 3 }, stateFile: file });
    await emu.saveState();
    await chmod(file, 0o644);
    // What a killed save could leave behind, readable by everyone.
    await writeFile(`${file}.tmp-${process.pid}`, "stale", { mode: 0o666 });
    await chmod(`${file}.tmp-${process.pid}`, 0o666);
    await emu.saveState();
    expect(await mode(file)).toBe(0o600);
    expect(await readdir(dir)).toEqual(["state.jsonl"]);
  });

  it("creates a missing folder owner-only", async () => {
    const file = path.join(dir, "data", "nested", "state.jsonl");
    emu = await startEmulator({ port: 0, host: "127.0.0.1", sizes: { people: 2 }, stateFile: file });
    await emu.close();
    expect(await mode(file)).toBe(0o600);
    expect(await mode(path.join(dir, "data"))).toBe(0o700);
    expect(await mode(path.join(dir, "data", "nested"))).toBe(0o700);
  });
});
