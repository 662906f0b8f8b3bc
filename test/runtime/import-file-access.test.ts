import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeConfig } from "../../src/config/index.ts";
import { ImportFileError } from "../../src/imports/index.ts";
import {
  allowedImportFile,
  grantImportFile,
  importRoots,
  isWatchedFolder,
} from "../../src/runtime/import-file-access.ts";

describe("the files a queued import may read", () => {
  let dir: string;
  let config: RuntimeConfig;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "recruit-sync-roots-")));
    root = path.join(dir, "root");
    outside = path.join(dir, "elsewhere", "secrets.env");
    await mkdir(path.join(dir, "elsewhere"), { recursive: true });
    await mkdir(path.join(dir, "data", "uploads", "u1"), { recursive: true });
    await mkdir(path.join(dir, "inbox"), { recursive: true });
    await mkdir(path.join(root, "sub"), { recursive: true });
    await writeFile(outside, "RECRUIT_SYNC_API_TOKEN=secret-XYZ\n", { mode: 0o600 });
    await writeFile(path.join(root, "sub", "contacts.csv"), "Email\na@example.org\n");
    await writeFile(path.join(dir, "data", "uploads", "u1", "upload.csv"), "Email\n");
    await writeFile(path.join(dir, "inbox", "dropped.csv"), "Email\n");
    await symlink(outside, path.join(root, "link-out.csv"));
    await symlink(path.join(root, "sub", "contacts.csv"), path.join(root, "link-in.csv"));
    config = RuntimeConfig.parse({
      service: { baseUrl: "http://127.0.0.1:9/api/public/v1", token: "the-token" },
      redis: { url: "redis://127.0.0.1:6379", prefix: "unused" },
      warehouse: { url: `duckdb:${path.join(dir, "w.duckdb")}` },
      paths: { jobsDir: path.join(dir, "jobs"), dataDir: path.join(dir, "data") },
      imports: { roots: [root] },
      watch: [{ folder: path.join(dir, "inbox"), job: "hubspot-contacts" }],
    });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const queued = (file: string, grant?: string) => allowedImportFile(config, file, { by: "queue", grant });

  it("are the uploads, the watched folders and imports.roots", () => {
    expect(importRoots(config).map((r) => [r.dir, r.what])).toEqual([
      [path.join(dir, "data", "uploads"), "uploads"],
      [path.join(dir, "inbox"), "watched folder"],
      [root, "imports.roots"],
    ]);
  });

  it("reads a file under each root, and a link inside a root to a file inside it", async () => {
    await expect(queued(path.join(root, "sub", "contacts.csv"))).resolves.toBe(
      path.join(root, "sub", "contacts.csv"),
    );
    await expect(queued(path.join(dir, "data", "uploads", "u1", "upload.csv"))).resolves.toBeTruthy();
    await expect(queued(path.join(dir, "inbox", "dropped.csv"))).resolves.toBeTruthy();
    // The path opened is the link's target, so a link swapped after the check is not followed.
    await expect(queued(path.join(root, "link-in.csv"))).resolves.toBe(
      path.join(root, "sub", "contacts.csv"),
    );
  });

  it("refuses a file outside the roots in one line naming them and how to add one", async () => {
    const refused = await queued(outside).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ImportFileError);
    const err = refused as ImportFileError;
    expect(err.code).toBe("file_not_allowed");
    expect(err.retryable).toBe(false);
    expect(err.message).not.toContain("\n");
    expect(err.message.replaceAll(dir, "<dir>")).toMatchInlineSnapshot(
      `"refused <dir>/elsewhere/secrets.env: a queued import reads only files under <dir>/data/uploads (uploads), <dir>/inbox (watched folder), <dir>/root (imports.roots), or one named to 'recruit-sync import' at a shell; this file is outside them. Upload it in the console, drop it into a watched folder, or add its folder to imports.roots in the configuration"`,
    );
  });

  it("refuses a path that climbs out of a root with ..", async () => {
    const climbing = `${root}/sub/../../elsewhere/secrets.env`;
    await expect(queued(climbing)).rejects.toMatchObject({ code: "file_not_allowed" });
    // A root's own folder is no file under it either.
    await expect(queued(`${root}/sub/..`)).rejects.toMatchObject({ code: "file_not_allowed" });
  });

  it("refuses a link inside a root that leads outside it", async () => {
    const err = (await queued(path.join(root, "link-out.csv")).catch((e: unknown) => e)) as ImportFileError;
    expect(err.code).toBe("file_not_allowed");
    expect(err.message).toContain("leads outside them through a symbolic link");
    expect(err.message).not.toContain("elsewhere");
  });

  it("says a missing file is missing only inside a root: elsewhere it is refused like any other", async () => {
    await expect(queued(path.join(root, "absent.csv"))).rejects.toMatchObject({ code: "file_unreadable" });
    await expect(queued(path.join(dir, "elsewhere", "absent.env"))).rejects.toMatchObject({
      code: "file_not_allowed",
    });
  });

  it("reads a file outside the roots when the CLI signed it with the token, and that file only", async () => {
    const grant = grantImportFile(config, outside);
    expect(grant).toMatch(/^[0-9a-f]{64}$/);
    await expect(queued(outside, grant)).resolves.toBe(outside);
    const other = path.join(dir, "elsewhere", "other.env");
    await writeFile(other, "x\n");
    await expect(queued(other, grant)).rejects.toMatchObject({ code: "file_not_allowed" });
    await expect(queued(outside, "0".repeat(64))).rejects.toMatchObject({ code: "file_not_allowed" });
    // Signed by another token (another fleet, or a guess): refused.
    const foreign = grantImportFile({ ...config, service: { ...config.service, token: "other" } }, outside);
    await expect(queued(outside, foreign)).rejects.toMatchObject({ code: "file_not_allowed" });
    const noToken = { ...config, service: { ...config.service, token: undefined } };
    expect(grantImportFile(noToken, outside)).toBeUndefined();
    await expect(allowedImportFile(noToken, outside, { by: "queue", grant })).rejects.toMatchObject({
      code: "file_not_allowed",
    });
  });

  it("lets the person at a shell name any file", async () => {
    await expect(allowedImportFile(config, outside, { by: "shell" })).resolves.toBe(outside);
  });

  it("knows the configured watched folders, and no other", async () => {
    expect(await isWatchedFolder(config, path.join(dir, "inbox"))).toBe(true);
    expect(await isWatchedFolder(config, path.join(dir, "elsewhere"))).toBe(false);
    expect(await isWatchedFolder(config, "/etc")).toBe(false);
  });
});
