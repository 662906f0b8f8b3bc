import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const requireHere = createRequire(import.meta.url);

/** tsx's ESM API, located as its package.json exports it: require.resolve would give the CommonJS one. */
function tsxEsmApi(): URL {
  const pkg = requireHere.resolve("tsx/package.json");
  const exported = (requireHere(pkg) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(
    path.join(path.dirname(pkg), exported["./esm/api"]?.import.default ?? "dist/esm/api/index.mjs"),
  );
}

/**
 * How a worker thread starts the module `name` beside `here` (an
 * import.meta.url): `name.ts` under tsx and vitest, `name.js` once compiled.
 * A .ts thread starts by registering tsx in its own thread — the loader of
 * the main thread is not inherited by workers, and Node 20 ignores `--import`
 * in a worker's execArgv — then imports the module. Pass `eval` to the Worker.
 */
export function threadEntry(here: string, name: string): { entry: string | URL; eval: boolean } {
  const url = new URL(`./${name}${path.extname(fileURLToPath(here))}`, here);
  if (!url.pathname.endsWith(".ts")) return { entry: url, eval: false };
  const entry = `import(${JSON.stringify(tsxEsmApi().href)})
      .then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`;
  return { entry, eval: true };
}
