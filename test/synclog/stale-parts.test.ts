import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { retentionCutoff } from "../../src/synclog/purge.ts";
import { removeStaleLogParts } from "../../src/synclog/stale-parts.ts";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function fileAged(dir: string, name: string, days: number): Promise<void> {
  const file = path.join(dir, name);
  await writeFile(file, "s,d\n1,ada@example.org\n", { mode: 0o600 });
  const at = new Date(Date.now() - days * 86_400_000);
  await utimes(file, at, at);
}

describe("the log parts a killed run left", () => {
  it("go once older than the retention; a run's fresh part and the run's other files stay", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "stale-parts-"));
    dirs.push(dir);
    await fileAged(dir, "crm-2026-10-01T03-00-00-000Z.sync-log.1.csv", 40);
    await fileAged(dir, "crm-2026-10-01T03-00-00-000Z.sync-log.2.csv", 31);
    await fileAged(dir, "crm-2026-11-29T03-00-00-000Z.sync-log.1.csv", 0);
    await fileAged(dir, "crm-2026-10-01T03-00-00-000Z.rejects.csv", 40);
    await fileAged(dir, "notes.sync-log.csv", 40);

    expect(await removeStaleLogParts(dir, retentionCutoff(30))).toBe(2);
    expect((await readdir(dir)).sort()).toEqual([
      "crm-2026-10-01T03-00-00-000Z.rejects.csv",
      "crm-2026-11-29T03-00-00-000Z.sync-log.1.csv",
      "notes.sync-log.csv",
    ]);
    expect(await removeStaleLogParts(dir, retentionCutoff(30))).toBe(0);
  });

  it("finds none in a data folder not made yet", async () => {
    expect(await removeStaleLogParts(path.join(tmpdir(), `no-such-${Date.now()}`), new Date())).toBe(0);
  });
});
