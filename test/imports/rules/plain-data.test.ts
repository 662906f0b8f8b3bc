import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The mapping rules are plain data in and out: nothing they load, however
// deep, starts a thread, opens a file or a socket, or reaches Redis, so
// that each rule can be tested alone and a change to one needs no machinery.

const SRC = fileURLToPath(new URL("../../../src/", import.meta.url));
const RULES = path.join(SRC, "imports/rules/index.ts");

/** What the rules may load from outside `src`: the contract's schemas, phone numbers and names. */
const PACKAGES = ["zod", "libphonenumber-js", "parse-full-name"];
/** Words of the machinery: the parse thread's transport and its shared counters. */
const MACHINERY =
  /\b(?:Int8|Uint8|Uint8Clamped|Int16|Uint16|Int32|Uint32|Float32|Float64|BigInt64|BigUint64)Array\b|\bSharedArrayBuffer\b|\bAtomics\b|\bnew Worker\b/;

/** The static imports and re-exports of a module that load code (`import type` loads none), and its dynamic ones. */
function loads(source: string): string[] {
  const out: string[] = [];
  const statement = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*"([^"]+)"/g;
  for (const m of source.matchAll(statement)) {
    const [, , typeOnly, clause, spec] = m as unknown as [string, string, string | undefined, string, string];
    const names = /^\{([^}]*)\}$/.exec(clause.trim())?.[1];
    const allTypes =
      names
        ?.split(",")
        .map((n) => n.trim())
        .filter(Boolean)
        .every((n) => n.startsWith("type ")) ?? false;
    if (typeOnly === undefined && !allTypes) out.push(spec);
  }
  for (const m of source.matchAll(/(?:^|\n)\s*import\s*"([^"]+)"/g)) out.push(m[1] as string);
  for (const m of source.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) out.push(m[1] as string);
  return out;
}

interface Graph {
  modules: Map<string, string>;
  /** Each package or built-in loaded, with the modules that load it. */
  outside: Map<string, string[]>;
}

/** Every module of `src` that loading `entry` loads, and what they load from outside `src`. */
function graphOf(entry: string): Graph {
  const graph: Graph = { modules: new Map(), outside: new Map() };
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (graph.modules.has(file)) continue;
    const source = readFileSync(file, "utf8");
    graph.modules.set(file, source);
    for (const spec of loads(source)) {
      if (spec.startsWith(".")) todo.push(path.resolve(path.dirname(file), spec));
      else graph.outside.set(spec, [...(graph.outside.get(spec) ?? []), path.relative(SRC, file)]);
    }
  }
  return graph;
}

const packageOf = (spec: string) =>
  spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : (spec.split("/")[0] as string);
const isBuiltin = (spec: string) => spec.startsWith("node:") || builtinModules.includes(packageOf(spec));

describe("the mapping rules", () => {
  const graph = graphOf(RULES);
  const rel = [...graph.modules.keys()].map((f) => path.relative(SRC, f));

  it("load every rule through their one entry", () => {
    for (const rule of [
      "imports/rules/column-plan.ts",
      "imports/rules/map-row.ts",
      "imports/rules/assemble-person.ts",
      "imports/rules/read-cell.ts",
      "imports/rules/multi-value.ts",
      "imports/rules/merge-person.ts",
      "imports/rules/transforms/phone.ts",
      "imports/rules/presets/hubspot.ts",
    ]) {
      expect(rel).toContain(rule);
    }
  });

  it("load no Node built-in: no thread, no file, no socket", () => {
    const builtins = [...graph.outside].filter(([spec]) => isBuiltin(spec));
    expect(builtins).toEqual([]);
  });

  it("load no package but the contract's schemas, phone numbers and names: no Redis, no queue, no parser", () => {
    const others = [...graph.outside].filter(
      ([spec]) => !isBuiltin(spec) && !PACKAGES.includes(packageOf(spec)),
    );
    expect(others).toEqual([]);
  });

  it("hold no typed array, shared memory or worker: the parse thread's transport stays in the machinery", () => {
    const found = [...graph.modules]
      .filter(([, source]) => MACHINERY.test(source))
      .map(([f]) => path.relative(SRC, f));
    expect(found).toEqual([]);
  });
});

describe("the check itself", () => {
  it("finds the thread, the file and the typed arrays of the reader that starts the parse thread", () => {
    const reader = graphOf(path.join(SRC, "imports/read-records.ts"));
    expect([...reader.outside.keys()]).toEqual(
      expect.arrayContaining(["node:worker_threads", "node:fs/promises"]),
    );
    expect([...reader.modules.values()].some((source) => MACHINERY.test(source))).toBe(true);
  });

  it("tells an import of types, which loads nothing, from one of code", () => {
    expect(
      loads(
        [
          'import type { A } from "./a.ts";',
          'import { type B, type C } from "./b.ts";',
          'import { type D, e } from "./d.ts";',
          'export { f } from "./f.ts";',
          'export type { G } from "./g.ts";',
          'const h = await import("./h.ts");',
        ].join("\n"),
      ),
    ).toEqual(["./d.ts", "./f.ts", "./h.ts"]);
  });
});
