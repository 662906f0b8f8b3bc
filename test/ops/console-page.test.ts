import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { PERSON_FIELDS } from "../../src/api/schemas/person.ts";
import { FULL_NAME, IDENTIFYING_FIELDS, TRANSFORM_WORDS } from "../../src/config/column-targets.ts";
import { bundlePage, type PageBundle } from "../../src/ops/console/page-bundle.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const PAGE = path.join(ROOT, "src/ops/console/page");

/** The page's script may grow with its code; a package that brings its weight along shows here first. */
const MAX_BYTES = 600 * 1024;

/** The page's own sources, by file name. */
async function pageSources(): Promise<Map<string, string>> {
  const names = (await readdir(PAGE)).filter((f) => f.endsWith(".ts"));
  return new Map(
    await Promise.all(names.map(async (f) => [f, await readFile(path.join(PAGE, f), "utf8")] as const)),
  );
}

/** The packages a bundle took code from. */
function packagesOf(bundle: PageBundle): string[] {
  const names = Object.keys(bundle.metafile.inputs).flatMap((input) => {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    return m?.[1] ? [m[1]] : [];
  });
  return [...new Set(names)].sort();
}

describe("the console's page script", () => {
  let bundle: PageBundle;
  let sources: Map<string, string>;

  beforeAll(async () => {
    [bundle, sources] = await Promise.all([bundlePage(), pageSources()]);
  }, 60_000);

  it("is bundled for a browser from the page's TypeScript and the shared modules of src/", () => {
    const inputs = Object.keys(bundle.metafile.inputs);
    // The contract's person fields, the job words, the answers' schemas, the progress model: one copy each, in src/.
    expect(inputs).toEqual(
      expect.arrayContaining([
        "src/ops/console/page/main.ts",
        "src/api/schemas/person.ts",
        "src/config/column-targets.ts",
        "src/ops/console/api-contract.ts",
        "src/queue/progress-model-schema.ts",
        "src/suggest/suggestion.ts",
        "src/imports/report.ts",
        "src/exports/run-report.ts",
      ]),
    );
    // Built for a browser, a Node built-in fails the build; no package of the server's side comes along either.
    expect(packagesOf(bundle)).toEqual(["libphonenumber-js", "zod"]);
    expect(inputs.filter((i) => i.startsWith("src/") && /\/index\.ts$/.test(i))).toEqual([]);
    expect(bundle.code.length).toBeGreaterThan(10_000);
    expect(bundle.code.length).toBeLessThan(MAX_BYTES);
  });

  it("writes no person field, transform or identifier of its own: each comes from src/", () => {
    const words = [...PERSON_FIELDS, FULL_NAME, ...TRANSFORM_WORDS, ...IDENTIFYING_FIELDS];
    const copies: string[] = [];
    for (const [file, text] of sources) {
      for (const word of words) {
        if (new RegExp(`["'\`]${word}["'\`]`).test(text)) copies.push(`${file}: "${word}"`);
      }
    }
    expect(copies).toEqual([]);
  });

  it("declares no schema of its own: it parses every answer with the server's (api-contract.ts)", () => {
    const schemas: string[] = [];
    for (const [file, text] of sources) {
      // zod's types are welcome; a value import would be a schema written a second time.
      if (/^import (?!type )[^;]*from "zod"/m.test(text)) schemas.push(file);
    }
    expect(schemas).toEqual([]);
    expect([...sources.values()].some((text) => text.includes('from "../api-contract.ts"'))).toBe(true);
  });

  it("type-checks strictly with the DOM's types and without Node's", { timeout: 120_000 }, async () => {
    const tsc = path.join(ROOT, "node_modules/.bin/tsc");
    const { stdout } = await run(tsc, ["--noEmit", "-p", path.join(PAGE, "tsconfig.json"), "--listFiles"], {
      cwd: ROOT,
    });
    const checked = stdout.split("\n").filter((f) => f.startsWith(`${ROOT}/src/`));
    expect(checked).toContain(path.join(PAGE, "main.ts"));
    expect(checked).toContain(path.join(ROOT, "src/ops/console/api-contract.ts"));
    // What the page reaches in src/ compiles for a browser: no module of the Node side among them.
    expect(checked.filter((f) => /\/(runtime|queue\/index|imports\/index)\b/.test(f))).toEqual([]);
  });
});
