import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/cli.ts";

function cli(args: string[]): Promise<CliResult> {
  return runCli(args, { env: { NODE_ENV: "" } });
}

describe("recruit-sync jobs", () => {
  it("validates every committed job definition", async () => {
    const r = await cli(["jobs", "validate"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok +jobs\/hubspot-contacts\.yaml$/m);
    expect(r.stdout).toMatch(/^ok +jobs\/nightly-export\.yaml$/m);
    expect(r.stdout).not.toContain("invalid");
  });

  it("lists each definition with its kind", async () => {
    const r = await cli(["jobs", "list"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^hubspot-contacts +import +study study_1/m);
    expect(r.stdout).toMatch(/^nightly-export +export +participants/m);
  });

  it("prints every problem with its path and exits 2", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "jobs-"));
    writeFileSync(
      path.join(dir, "bad-export.yaml"),
      "kind: export\nresources: [participants, nonsense]\npageSize: 500\n",
    );
    writeFileSync(path.join(dir, "bad-kind.yaml"), "kind: teleport\n");
    writeFileSync(path.join(dir, "broken.yaml"), "kind: [unclosed\n");
    const r = await cli(["jobs", "validate", "--dir", dir]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/bad-export\.yaml: resources\.1: /);
    expect(r.stdout).toMatch(/bad-export\.yaml: pageSize: /);
    expect(r.stdout).toMatch(/bad-kind\.yaml: kind: must be "import", "opt-out" or "export"/);
    expect(r.stdout).toMatch(
      /broken\.yaml: \(top\): not valid YAML at line 2, column 1: .* \(line 1: "kind: \[unclosed"\)$/m,
    );
    expect(r.stderr.trim().split("\n")).toEqual([
      `recruit-sync: 3 of 3 job definitions in ${dir} are invalid`,
    ]);
  });

  it("exits 2 with a usage line for an unknown command", async () => {
    const r = await cli(["frobnicate"]);
    expect(r.code).toBe(2);
  });
});
