import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { runCli } from "../helpers/cli.ts";

const repo = path.resolve(".");

function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return runCli(args, { cwd, env: { NODE_ENV: "", RECRUIT_SYNC_CONFIG_DIR: "", ...env } });
}

describe("finding the configuration from any directory", () => {
  const elsewhere = mkdtempSync(path.join(tmpdir(), "recruit-sync-cwd-"));

  it("lists the project's jobs from another directory with --config", async () => {
    const r = await cli(["--config", path.join(repo, "config"), "jobs", "list"], elsewhere);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^nightly-export +export/m);
  });

  it("takes RECRUIT_SYNC_CONFIG_DIR the same way", async () => {
    const r = await cli(["jobs", "list"], elsewhere, { RECRUIT_SYNC_CONFIG_DIR: path.join(repo, "config") });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^hubspot-contacts +import/m);
  });

  it("resolves paths in a config file against the folder that holds the config folder", async () => {
    const project = mkdtempSync(path.join(tmpdir(), "recruit-sync-project-"));
    cpSync(path.join(repo, "config"), path.join(project, "config"), { recursive: true });
    cpSync(path.join(repo, "jobs", "opt-out-list.yaml"), path.join(project, "my-jobs", "opt-out-list.yaml"));
    writeFileSync(
      path.join(project, "config", "default.yaml"),
      readFileSync(path.join(repo, "config", "default.yaml"), "utf8").replace(
        "jobsDir: ./jobs",
        "jobsDir: ./my-jobs",
      ),
    );
    const r = await cli(["--config", path.join(project, "config"), "jobs", "list"], elsewhere);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.stdout).toMatch(/^opt-out-list +opt-out/m);
  });

  it("takes a configuration folder holding only what differs from the defaults", async () => {
    const project = mkdtempSync(path.join(tmpdir(), "recruit-sync-project-"));
    mkdirSync(path.join(project, "config"));
    mkdirSync(path.join(project, "jobs"));
    cpSync(path.join(repo, "jobs", "opt-out-list.yaml"), path.join(project, "jobs", "opt-out-list.yaml"));
    writeFileSync(path.join(project, "config", "default.yaml"), "log:\n  level: warn\n");
    const r = await cli(["--config", path.join(project, "config"), "jobs", "list"], elsewhere);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // The shipped default ./jobs means the user's project's jobs/, not the package's.
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.stdout).toMatch(/^opt-out-list +opt-out/m);
    const config = loadConfig({ configDir: path.join(project, "config"), env: {} });
    expect(config.log.level).toBe("warn");
    expect(config.service.baseUrl).toBe("http://127.0.0.1:4010/api/public/v1");
    expect(config.paths.dataDir).toBe(path.join(project, "data"));
    expect(config.warehouse.url).toBe(`duckdb:${path.join(project, "data", "warehouse.duckdb")}`);
  });

  it("lists each job by the name --job takes, the file's, even when the definition names itself otherwise", async () => {
    const project = mkdtempSync(path.join(tmpdir(), "recruit-sync-project-"));
    mkdirSync(path.join(project, "config"));
    mkdirSync(path.join(project, "jobs"));
    writeFileSync(
      path.join(project, "jobs", "crm-weekly.yaml"),
      readFileSync(path.join(repo, "jobs", "opt-out-list.yaml"), "utf8").replace(/^name: .*$/m, "") +
        "\nname: opt-outs\n",
    );
    const r = await cli(["--config", path.join(project, "config"), "jobs", "list"], elsewhere);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^crm-weekly +opt-out .*\(named opt-outs\)$/m);
  });

  it("says in one line where it looked when there is no configuration folder", async () => {
    const r = await cli(["jobs", "list"], elsewhere);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(path.join(elsewhere, "config"));
    expect(r.stderr).toContain("--config");
  });

  it("names the folder it was given when that one is missing", async () => {
    const r = await cli(["--config", "/nonexistent/conf", "jobs", "list"], elsewhere);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("/nonexistent/conf");
  });
});
