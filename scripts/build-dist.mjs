// Compiles src/ to dist/ (one .js per .ts, same tree) so the CLI starts without
// compiling TypeScript on every run, then bundles the CLI itself into
// dist/cli/main.js and its chunks (scripts/cli-bundle.mjs). Runs as the
// package's `prepare` script, i.e. on `npm install` / `npm ci` in a clone;
// `npm run build` runs it by hand. bin/recruit-sync.mjs uses dist/ only while
// it matches src/ (and the bundled packages) exactly and runs src/ through tsx
// otherwise, so a missing or stale build is slow, never wrong. The console's
// page, a browser script, is bundled on its own into dist/ops/console/console.js.
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

if (!existsSync(new URL("../src", import.meta.url)) || !existsSync(new URL("../bin", import.meta.url))) {
  // A dependencies-only install: the Dockerfile's first stage has package.json and this script alone.
  console.log("build-dist: no src/ here, nothing to compile");
  process.exit(0);
}
const { DIST, ROOT, SRC, STAMP, filesFingerprint, sourceFingerprint } = await import(
  "../bin/compiled-cli.mjs"
);
const { BUNDLED_ENTRIES, bundleEntry, bundledPackageManifests } = await import("./cli-bundle.mjs");

// esbuild comes with tsx, a runtime dependency, so it is there with --omit=dev too.
const esbuild = await import("esbuild");
const started = performance.now();
const fingerprint = sourceFingerprint();
// The console's page runs in a browser, not in Node: its sources go into its bundle only.
const PAGE_SOURCES = path.join("ops", "console", "page");
const sources = readdirSync(SRC, { recursive: true })
  .map(String)
  .filter((f) => f !== PAGE_SOURCES && !f.startsWith(`${PAGE_SOURCES}${path.sep}`));
// The bundled entries get their files from the bundles; every other module gets one of its own.
const entryPoints = sources
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && !BUNDLED_ENTRIES.includes(f))
  .map((f) => path.join(SRC, f));
const tmp = `${DIST}.tmp-${process.pid}`;
rmSync(tmp, { recursive: true, force: true });

// Bundling each file on its own with every import left external keeps the
// tree as it is (so import.meta.url-relative paths still hold) while letting a
// plugin point relative imports at the compiled files: "./x.ts" becomes "./x.js".
const keepImportsAsCompiledFiles = {
  name: "keep-imports-as-compiled-files",
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      const relative = args.path.startsWith("./") || args.path.startsWith("../");
      return { path: relative ? args.path.replace(/\.ts$/, ".js") : args.path, external: true };
    });
  },
};

const result = await esbuild.build({
  entryPoints,
  outdir: tmp,
  outbase: SRC,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  keepNames: true,
  logLevel: "warning",
  plugins: [keepImportsAsCompiledFiles],
});
if (result.errors.length > 0) process.exit(1);

// Files that are not TypeScript (SQL, JSON, templates) go along as they are.
for (const rel of sources) {
  const file = path.join(SRC, rel);
  if (rel.endsWith(".ts") || !statSync(file).isFile()) continue;
  mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true });
  cpSync(file, path.join(tmp, rel));
}

// The page's script, by the recipe the server uses from the sources (its module, just compiled).
const pageBundle = await import(pathToFileURL(path.join(tmp, "ops", "console", "page-bundle.js")).href);
const page = await pageBundle.bundlePage(SRC);
writeFileSync(path.join(tmp, "ops", "console", pageBundle.PAGE_SCRIPT), page.code);

const bundles = [page.metafile];
for (const entry of BUNDLED_ENTRIES) {
  const metafile = await bundleEntry(esbuild, { entry, srcDir: SRC, distDir: tmp, rootDir: ROOT });
  if (!metafile) process.exit(1);
  bundles.push(metafile);
}
const files = { ...fingerprint, ...filesFingerprint(bundledPackageManifests(bundles, ROOT)) };

writeFileSync(path.join(tmp, path.relative(DIST, STAMP)), `${JSON.stringify({ files })}\n`);
rmSync(DIST, { recursive: true, force: true });
renameSync(tmp, DIST);
console.log(
  `build-dist: ${entryPoints.length + BUNDLED_ENTRIES.length} modules from src/ compiled to ${path.relative(ROOT, DIST)}/ in ${Math.round(performance.now() - started)} ms`,
);
