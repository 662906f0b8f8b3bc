// The CLI as a few files instead of some six hundred: dist/cli/main.js and the
// chunks beside it hold our modules and the pure-JavaScript packages the
// commands use. Node spends most of an inline import's start-up resolving,
// reading and instantiating module files one by one; a bundle reads a handful.
// The parse worker's thread is bundled the same way. Used by
// scripts/build-dist.mjs after the one-file-per-module compile, whose tree
// stays: it is what the bundles' import.meta paths point at (the parse
// worker, files read next to a module).
import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * Packages compiled into the bundle, with what they import. Each is plain
 * JavaScript that reads no file of its own at run time. Everything else stays
 * an import of node_modules: native code (DuckDB), the heavy packages only
 * some commands load (pg, fastify, BullMQ, bull-board: their own chunks would
 * do, but as imports they stay out of reach of the start-up path for sure),
 * and pino, whose transports start worker files next to its own.
 */
export const BUNDLED_PACKAGES = [
  "chardet",
  "cli-progress",
  "commander",
  "cron-parser",
  "csv-parse",
  "csv-stringify",
  "iconv-lite",
  "ioredis",
  "libphonenumber-js",
  "p-limit",
  "yaml",
  "zod",
];

/** "zod" of "zod/v4/core", "@scope/name" of "@scope/name/sub". */
function packageOf(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/**
 * Imports of packages outside BUNDLED_PACKAGES stay imports. A bundled
 * package's own imports are bundled with it (Node's built-ins stay out by
 * themselves).
 */
function externalPackages(srcDir) {
  return {
    name: "external-packages",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.kind === "entry-point" || args.path.startsWith("node:")) return undefined;
        if (!args.importer.startsWith(`${srcDir}${path.sep}`)) return undefined;
        return BUNDLED_PACKAGES.includes(packageOf(args.path))
          ? undefined
          : { path: args.path, external: true };
      });
    },
  };
}

/**
 * A module's import.meta.url is that of the chunk it lands in. Paths made from
 * it (the parse worker's file, the shipped config, the console's page) must
 * still be those of the module's own compiled file in the one-per-module
 * tree, so each module gets its own URL: its file under dist/, from the
 * bundle's folder. All bundle files share one folder (checked after the
 * build), so one relative path holds wherever the module lands.
 */
function ownImportMeta({ srcDir, distDir, bundleDir }) {
  return {
    name: "own-import-meta",
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!args.path.startsWith(`${srcDir}${path.sep}`)) return undefined;
        const source = readFileSync(args.path, "utf8");
        if (!source.includes("import.meta")) return undefined;
        const compiled = path.join(distDir, path.relative(srcDir, args.path)).replace(/\.ts$/, ".js");
        const fromBundle = path.relative(bundleDir, compiled).split(path.sep).join("/");
        const contents = source
          .replaceAll("import.meta.url", "__ownModuleUrl")
          .replaceAll("import.meta.filename", "__ownModuleFilename")
          .replaceAll("import.meta.dirname", "__ownModuleDirname");
        const left = /import\.meta\.?\w*/.exec(contents);
        if (left) {
          return {
            errors: [{ text: `${left[0]} has no stand-in in the CLI bundle (scripts/cli-bundle.mjs)` }],
          };
        }
        const prelude = [
          'import { dirname as __ownDirnameOf } from "node:path";',
          'import { fileURLToPath as __ownFileURLToPath } from "node:url";',
          `const __ownModuleUrl = new URL(${JSON.stringify(fromBundle)}, import.meta.url).href;`,
          "const __ownModuleFilename = __ownFileURLToPath(__ownModuleUrl);",
          "const __ownModuleDirname = __ownDirnameOf(__ownModuleFilename);",
        ].join(" ");
        // One line, so that the module's own lines keep their numbers.
        return { contents: `${prelude}${contents}`, loader: "ts" };
      });
    },
  };
}

/**
 * The modules started by path, bundled: the CLI (bin/recruit-sync.mjs imports
 * it) and the parse worker (read-records.ts starts it as a thread). Each
 * replaces its own compiled file in dist/.
 */
export const BUNDLED_ENTRIES = ["cli/main.ts", "imports/parse-worker.ts"];

/**
 * Builds `entry` (under `srcDir`) with everything it imports, statically or
 * not, to where its compiled file goes under `distDir`, with chunk-*.js beside
 * it: dynamic imports stay dynamic (each command's modules load when it runs),
 * as separate chunks. Resolves to esbuild's metafile, or undefined when the
 * build failed.
 */
export async function bundleEntry(esbuild, { entry, srcDir, distDir, rootDir }) {
  const bundleDir = path.dirname(path.join(distDir, entry));
  const result = await esbuild.build({
    entryPoints: [path.join(srcDir, entry)],
    outdir: bundleDir,
    entryNames: "[name]",
    chunkNames: "chunk-[hash]",
    absWorkingDir: rootDir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    keepNames: true,
    // Without comments and indentation: V8 keeps every module's source text in
    // the heap, and a comment's one non-Latin-1 character (an em dash) made a
    // whole chunk two bytes a character.
    minifyWhitespace: true,
    metafile: true,
    // Stack traces name chunks; bin/recruit-sync.mjs turns these maps on where
    // it prints stacks (--verbose, DEBUG), so they name the sources there.
    sourcemap: "linked",
    sourcesContent: false,
    logLevel: "warning",
    // CommonJS packages in an ES module bundle reach Node's built-ins through require.
    banner: {
      js: 'import { createRequire as __bundleCreateRequire } from "node:module"; const require = __bundleCreateRequire(import.meta.url);',
    },
    plugins: [externalPackages(srcDir), ownImportMeta({ srcDir, distDir, bundleDir })],
  });
  if (result.errors.length > 0) return undefined;
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.resolve(rootDir, f));
  const elsewhere = outputs.filter((f) => path.dirname(f) !== bundleDir);
  if (elsewhere.length > 0)
    throw new Error(`cli-bundle: output outside ${bundleDir}: ${elsewhere.join(", ")}`);
  return result.metafile;
}

/**
 * The package.json of every package the bundles took code from, relative to
 * `rootDir`: a package updated in node_modules makes them stale, as an edited
 * source does.
 */
export function bundledPackageManifests(metafiles, rootDir) {
  const manifests = new Set();
  for (const input of metafiles.flatMap((m) => Object.keys(m.inputs))) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) manifests.add(path.relative(rootDir, path.resolve(rootDir, m[1], "package.json")));
  }
  return [...manifests].sort();
}
