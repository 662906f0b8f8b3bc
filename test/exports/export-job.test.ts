import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readExportJobFile, validateExportJobDefinition } from "../../src/config/export-job.ts";

describe("export job definitions", () => {
  it("accepts the sample nightly job and fills in the defaults", async () => {
    const read = await readExportJobFile("nightly-export");
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    const result = validateExportJobDefinition(read.raw);
    expect(result).toMatchObject({
      ok: true,
      definition: {
        kind: "export",
        name: "nightly-export",
        studies: ["study_1", "study_5", "study_9"],
        emails: { backfillDays: 30, lookbackHours: 48 },
        incentives: { fromWarehouse: true },
        schedule: { cron: "30 2 * * *", timezone: "Europe/Berlin" },
      },
    });
  });

  it("defaults to every resource, the whole warehouse's incentives and pages of 100", () => {
    const result = validateExportJobDefinition({ kind: "export", studies: ["s"], propertyGroups: ["g"] });
    expect(result.ok && result.definition).toMatchObject({
      resources: [
        "participants",
        "email_messages",
        "incentives",
        "custom_incentives",
        "segments",
        "person_properties",
      ],
      pageSize: 100,
      incentives: { ids: [], fromWarehouse: true },
    });
  });

  it("reports every problem with its path", () => {
    const result = validateExportJobDefinition({
      kind: "export",
      resources: ["participants", "emails", "participants"],
      pageSize: 500,
      emails: { backfillDays: 0, extra: true },
      schedule: { cron: "61 * * * *", timezone: "Mars/Olympus" },
      sink: "mysql://x",
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const paths = result.problems.map((p) => p.path).sort();
    expect(paths).toEqual(
      expect.arrayContaining(["emails", "emails.backfillDays", "pageSize", "resources.1", "sink"]),
    );
    // Refinements over the whole object only run once the shape is right.
    const second = validateExportJobDefinition({
      kind: "export",
      resources: ["participants", "person_properties"],
      schedule: { cron: "61 * * * *", timezone: "Mars/Olympus" },
    });
    expect(second.ok).toBe(false);
    if (second.ok) return;
    expect(second.problems.map((p) => `${p.path}: ${p.message}`).sort()).toEqual([
      expect.stringMatching(/^propertyGroups: exporting person_properties needs/),
      expect.stringMatching(/^schedule.cron: not a cron expression/),
      'schedule.timezone: unknown time zone "Mars/Olympus"',
      expect.stringMatching(/^studies: exporting participants needs at least one study/),
    ]);
  });

  it("refuses a definition of another kind", () => {
    const result = validateExportJobDefinition(parseYaml("kind: import\n"));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems[0]?.path).toBe("kind");
  });

  it("says when the job file is missing or not YAML", async () => {
    const missing = await readExportJobFile("no-such-job");
    expect(missing).toMatchObject({ ok: false, problems: [{ message: "no such job file" }] });
    expect(await readFile("jobs/nightly-export.yaml", "utf8")).toContain("kind: export");
  });
});
