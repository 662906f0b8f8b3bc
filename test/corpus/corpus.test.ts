import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type ImportJobDefinition, validateFileJobDefinition } from "../../src/config/import-job.ts";
import { type ImportReport, readFirstRecords, runImport } from "../../src/imports/index.ts";
import { type MappingSuggestion, suggestionYaml, suggestMappingForFile } from "../../src/suggest/index.ts";
import { Expected } from "./expected.ts";

/*
 * Issue 30's measure, in-process: each real export of the corpus through
 * `jobs suggest` (the function the command calls, 200 sampled rows, no
 * workspace properties, as the command has without a property group) and the
 * suggestion, round-tripped through its YAML as a saved job is, imported
 * untouched as a dry run (`import --dry-run --inline`: runImport with dryRun,
 * the requests to a file). Against the hand count beside each file: at least
 * 95% of its people, and where it has a consent column, every person's
 * consent as its value says.
 */

const CORPUS = import.meta.dirname;
const SHARE = 0.95;

const files = (await readdir(CORPUS)).filter((f) => f.endsWith(".csv")).sort();
const EXPECTED = new Map(
  await Promise.all(
    files.map(
      async (f) =>
        [
          f,
          Expected.parse(
            JSON.parse(await readFile(path.join(CORPUS, f.replace(/\.csv$/, ".expected.json")), "utf8")),
          ),
        ] as const,
    ),
  ),
);

interface Outcome {
  suggestion: MappingSuggestion;
  definition: ImportJobDefinition | undefined;
  report: ImportReport | undefined;
  /** The people the dry run would send, merged as the import merges them. */
  people: Record<string, unknown>[];
  /** Why the dry run could not run, in one line. */
  failed: string | undefined;
}

/** What `jobs suggest FILE --study S > jobs/x.yaml` then `import FILE --job x --dry-run` does, in-process. */
async function suggestAndDryRun(file: string, expected: Expected, work: string): Promise<Outcome> {
  const suggestion = await suggestMappingForFile(file, { name: "corpus", studyId: expected.study });
  const out: Outcome = {
    suggestion,
    definition: undefined,
    report: undefined,
    people: [],
    failed: undefined,
  };
  if (!suggestion.definition) return out;
  const saved = validateFileJobDefinition(parseYaml(suggestionYaml(suggestion, suggestion.definition)));
  if (!saved.ok || saved.definition.kind !== "import") {
    out.failed = `the saved suggestion is no import job: ${JSON.stringify(saved.ok ? saved.definition.kind : saved.problems)}`;
    return out;
  }
  out.definition = saved.definition;
  try {
    out.report = await runImport({
      file,
      definition: saved.definition,
      dryRun: true,
      rejectsFile: path.join(work, "rejects.csv"),
      requestsFile: path.join(work, "requests.jsonl"),
      workDir: work,
    });
  } catch (err) {
    out.failed = err instanceof Error ? err.message : String(err);
    return out;
  }
  const lines = out.report.requestsFile
    ? (await readFile(out.report.requestsFile, "utf8")).split("\n").filter(Boolean)
    : [];
  out.people = lines.flatMap(
    (l) => (JSON.parse(l) as { body: { people: Record<string, unknown>[] } }).body.people,
  );
  return out;
}

/** The email a row is imported by, as a careful person reads the cell: its first address, lower-cased. */
function emailOf(cell: string): string | undefined {
  const first = cell
    .split(/\s*:::\s*|[;,]/)
    .map((v) => v.trim())
    .find((v) => v.includes("@"));
  return first?.toLowerCase();
}

type Consent = "optedOut" | "notOptedOut" | "unstated";

/**
 * Each person's consent as the hand count reads the file: the value of the
 * consent column in their rows, by the words expected.json lists, the last
 * row that says something winning (as the import merges a person's rows).
 */
async function consentByEmail(
  file: string,
  consent: NonNullable<Expected["consent"]>,
): Promise<Map<string, Consent>> {
  const { records } = await readFirstRecords(file, 1_000_000);
  const [header, ...rows] = records;
  const emailColumn = (header ?? []).findIndex(
    (h) => /e-?mail/i.test(h) && !/opt|status|exclude|accept/i.test(h),
  );
  const consentColumn = (header ?? []).indexOf(consent.column);
  if (emailColumn < 0 || consentColumn < 0) throw new Error(`no email or ${consent.column} column`);
  const out = new Map<string, Consent>();
  const says = (cell: string): Consent => {
    const v = cell.trim().toLowerCase();
    if (consent.optedOutValues.includes(v)) return "optedOut";
    if (consent.notOptedOutValues.includes(v)) return "notOptedOut";
    return "unstated";
  };
  for (const row of rows) {
    const email = emailOf(row[emailColumn] ?? "");
    if (email === undefined) continue;
    const said = says(row[consentColumn] ?? "");
    if (said !== "unstated" || !out.has(email)) out.set(email, said);
  }
  return out;
}

describe.each(files)("%s", (name) => {
  const file = path.join(CORPUS, name);
  const expected = EXPECTED.get(name) as Expected;
  let outcome: Outcome;
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), "corpus-test-"));
    outcome = await suggestAndDryRun(file, expected, work);
  });
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("gets a job suggested that the dry run can run", () => {
    expect(outcome.suggestion.problems).toEqual([]);
    expect(outcome.failed).toBeUndefined();
    expect(outcome.report).toBeDefined();
  });

  it("imports at least 95% of the people a careful person would import", () => {
    const key = outcome.definition?.target.identifier ?? expected.identifier;
    const people = new Set(outcome.people.map((p) => JSON.stringify(p[key])));
    const share = people.size / expected.importable;
    expect(
      share,
      `${people.size} of ${expected.importable} people by ${key} (hand count by ${expected.identifier}); ` +
        `rejected ${outcome.report?.rejected ?? "-"}: ${JSON.stringify(outcome.report?.rejectedByReason ?? {})}`,
    ).toBeGreaterThanOrEqual(SHARE);
  });

  const consent = expected.consent;
  if (!consent) return;
  it(`moves every person's consent the way "${consent.column}" says`, async () => {
    const column = outcome.suggestion.columns.find((c) => c.column === consent.column);
    expect(column?.to, `${consent.column} is mapped to isOptedOut`).toBe("isOptedOut");
    const byEmail = await consentByEmail(file, consent);
    const wrong: string[] = [];
    let optedOut = 0;
    for (const p of outcome.people) {
      const email = typeof p.email === "string" ? p.email.toLowerCase() : undefined;
      const said = email === undefined ? undefined : byEmail.get(email);
      if (p.isOptedOut === true) optedOut++;
      // Counts, never an address, in the message.
      if (said === "notOptedOut" && p.isOptedOut === true) wrong.push("a not-opted-out person opted out");
      if (said === "optedOut" && p.isOptedOut !== true) wrong.push("an opted-out person not opted out");
      if (said === "unstated" && p.isOptedOut !== undefined) wrong.push("an unstated consent guessed");
    }
    expect(wrong, "people whose consent moved the wrong way").toEqual([]);
    expect(optedOut).toBe(consent.optedOut);
  });
});
