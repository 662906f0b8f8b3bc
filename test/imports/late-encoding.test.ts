import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import iconv from "iconv-lite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import {
  createProject,
  faultHarness,
  importJob,
  openTestQueues,
  startWorkerProcess,
} from "../queue/helpers.ts";
import { dryRun, type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

/** Bytes of plain ASCII rows before the first accented letter: far past any sample of the file's start. */
const ASCII_BYTES = 200 * 1024;

/** `Email,First Name,Last Name,Notes` rows of plain ASCII, then `rows` as they are, in Windows-1252. */
function windows1252(rows: string[]): { bytes: Buffer; asciiRows: number } {
  const lines = ["Email,First Name,Last Name,Notes"];
  let size = lines[0]?.length ?? 0;
  let i = 0;
  while (size < ASCII_BYTES) {
    const line = `plain-${i}@late.example.org,Ann,Lee,${"called back on a weekday about the study ".repeat(2)}`;
    lines.push(line);
    size += line.length + 1;
    i++;
  }
  return { bytes: iconv.encode(`${[...lines, ...rows].join("\r\n")}\r\n`, "windows-1252"), asciiRows: i };
}

describe("a file's encoding", () => {
  const h = faultHarness();

  async function project() {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { crm: importJob(500) },
    });
    const p = h.project;
    const cli = (args: string[]) =>
      runCli(["--config", p.configDir, "import", ...args], { env: p.env, cwd: p.dir });
    const write = async (name: string, bytes: Buffer) => {
      const file = path.join(p.dir, name);
      await writeFile(file, bytes, { mode: 0o600 });
      return file;
    };
    const person = async (email: string) =>
      (await h.emu.snapshot()).people.find((x) => x.email === email) ?? { firstName: null, lastName: null };
    return { p, cli, write, person };
  }

  it("is read from the whole file: a Windows-1252 accent after 200 KB of ASCII imports every row, inline", async () => {
    const { p, cli, write, person } = await project();
    const { bytes, asciiRows } = windows1252([
      "chloe@late.example.org,Chloé,Martin,",
      "zoe@late.example.org,Zoë,Brontë,",
    ]);
    const file = await write("late-accent.csv", bytes);
    const r = await cli([file, "--job", "crm", "--inline", "--report", "report.json", "--no-shared-budget"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(await readFile(path.join(p.dir, "report.json"), "utf8"));
    expect(report).toMatchObject({
      encoding: "windows-1252",
      rowsRead: asciiRows + 2,
      imported: asciiRows + 2,
      rejected: 0,
    });
    expect((await person("chloe@late.example.org")).firstName).toBe("Chloé");
    expect((await person("zoe@late.example.org")).firstName).toBe("Zoë");
  }, 60_000);

  it("is the one --encoding names with --preset, over what detection reads", async () => {
    const { cli, write, person } = await project();
    // É then an en dash in Windows-1252 (C9 96) are also valid UTF-8, "ɖ": only the person who
    // exported the file knows which it is.
    const file = await write("ambiguous.csv", windows1252(["dupre@late.example.org,Anne,DUPRÉ–ROUX,"]).bytes);
    const preset = [file, "--preset", "hubspot", "--study", "study_2", "--inline", "--no-shared-budget"];

    const detected = await cli(preset);
    expect(detected.code).toBe(0);
    expect((await person("dupre@late.example.org")).lastName).toBe("DUPRɖROUX");

    const named = await cli([...preset, "--encoding", "windows-1252"]);
    expect(named.stderr).toBe("");
    expect(named.code).toBe(0);
    expect(named.stdout, named.stdout).toMatch(
      /rows read → [\d,]+ imported, (?:[\d,]+ unchanged, )?0 rejected/,
    );
    expect((await person("dupre@late.example.org")).lastName).toBe("DUPRÉ–ROUX");
  }, 60_000);

  it("is the one --encoding names with --job on a queued import, carried in the job's data to the worker", async () => {
    const { p, cli, write, person } = await project();
    const file = await write("queued.csv", windows1252(["rene@late.example.org,RENÉ–LOUIS,Roy,"]).bytes);
    const worker = startWorkerProcess(p);
    h.workers.push(worker);
    await worker.ready;

    const r = await cli([file, "--job", "crm", "--encoding", "windows-1252", "--wait"]);
    expect(r.code, worker.tail()).toBe(0);
    expect(r.stdout).toMatch(/rows read → [\d,]+ imported, (?:[\d,]+ unchanged, )?0 rejected/);
    const id = /import job (\S+) enqueued/.exec(r.stdout)?.[1] ?? "";
    h.tq = openTestQueues(p);
    expect((await h.tq.job("imports", id))?.data).toMatchObject({ job: "crm", encoding: "windows-1252" });
    expect((await person("rene@late.example.org")).firstName).toBe("RENÉ–LOUIS");
  }, 60_000);

  it("refuses a name it does not know, inline and queued, listing the ones it does", async () => {
    const { cli, write } = await project();
    const file = await write("any.csv", Buffer.from("Email,First Name\nann@late.example.org,Ann\n"));
    for (const way of [["--inline"], []]) {
      const r = await cli([file, "--job", "crm", "--encoding", "ebcdic", ...way]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(
        'recruit-sync: --encoding: unknown encoding "ebcdic": expected one of auto, utf-8, utf-16le, utf-16be, windows-1252, latin1',
      );
    }
    expect((await h.emu.requests()).total).toBe(0);
  }, 60_000);
});

describe("the whole file's bytes", () => {
  let s: Scratch;
  beforeEach(async () => {
    s = await scratch();
  });
  afterEach(async () => {
    await s.cleanup();
  });
  const definition = simpleDefinition({
    columns: [
      { column: "Email", to: "email" },
      { column: "First Name", to: "firstName" },
    ],
  });

  for (const worker of [false, true]) {
    it(`decide the encoding whichever thread parses${worker ? " (worker thread)" : ""}`, async () => {
      const { bytes, asciiRows } = windows1252(["chloe@late.example.org,Chloé,Martin,"]);
      const { report, people } = await dryRun(s, await s.file("late.csv", bytes), definition, worker);
      expect([report.encoding, report.rejected, people.length]).toEqual(["windows-1252", 0, asciiRows + 1]);
      expect(people.at(-1)?.firstName).toBe("Chloé");
    });
  }

  it("keep a UTF-8 file with accents UTF-8 when one corrupt byte comes late: that row alone is rejected", async () => {
    const rows = ["Email,First Name"];
    for (let i = 0; rows.join("\n").length < ASCII_BYTES; i++) rows.push(`p${i}@late.example.org,Zoë ${i}`);
    const bytes = Buffer.concat([
      Buffer.from(`${rows.join("\n")}\nbad@late.example.org,Chlo`),
      Buffer.from([0xe9]),
      Buffer.from("\nlast@late.example.org,Émile\n"),
    ]);
    const rejecting = { ...definition, invalidOptionalValues: "reject" as const };
    const { report, people, rejects } = await dryRun(s, await s.file("corrupt.csv", bytes), rejecting);
    expect([report.encoding, report.rejected, people.length]).toEqual(["utf-8", 1, rows.length]);
    expect(people.at(-1)?.firstName).toBe("Émile");
    expect(rejects[1]?.[0]).toBe(String(rows.length + 1));
  });
});
