import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Metafile } from "esbuild";

/** The page's script, as the server serves it and dist/ ships it beside this module. */
export const PAGE_SCRIPT = "console.js";

export interface PageBundle {
  code: string;
  /** What went into it: esbuild's record of every input, by path under the repository. */
  metafile: Metafile;
}

/**
 * The page's script: its TypeScript (`page/main.ts`, and what it imports of
 * src/: the contract's person fields, the job words, the answers' schemas,
 * the progress model) bundled for the browser. Built for a browser, so a
 * Node module reached by mistake fails the build. scripts/build-dist.mjs
 * writes it into dist/; from the sources the server bundles it at its start.
 */
export async function bundlePage(srcDir = path.resolve(import.meta.dirname, "../..")): Promise<PageBundle> {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [path.join(srcDir, "ops/console/page/main.ts")],
    absWorkingDir: path.dirname(srcDir),
    bundle: true,
    write: false,
    metafile: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    minify: true,
    charset: "utf8",
    legalComments: "none",
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error("bundling the console's page wrote nothing");
  return { code: output.text, metafile: result.metafile };
}

let fromSources: Promise<string> | undefined;

/**
 * The script the server serves: the one dist/ ships when it runs compiled,
 * else bundled from the sources once per process (tests start many servers).
 */
export function pageScript(): Promise<string> {
  if (!import.meta.filename.endsWith(".ts")) {
    return readFile(path.join(import.meta.dirname, PAGE_SCRIPT), "utf8");
  }
  fromSources ??= bundlePage().then((bundle) => bundle.code);
  return fromSources;
}
