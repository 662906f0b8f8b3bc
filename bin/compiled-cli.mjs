// Where the compiled CLI lives and whether it still matches src/. Shared by the
// bin (which must stay cheap: node:fs only) and scripts/build-dist.mjs.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const SRC = fileURLToPath(new URL("../src", import.meta.url));
export const DIST = fileURLToPath(new URL("../dist", import.meta.url));
export const STAMP = fileURLToPath(new URL("../dist/.sources.json", import.meta.url));
export const ENTRY = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
/** The build's own recipe: a change to it makes every earlier build stale too. */
const RECIPE = [
  fileURLToPath(new URL("../scripts/build-dist.mjs", import.meta.url)),
  fileURLToPath(new URL("../scripts/cli-bundle.mjs", import.meta.url)),
];

/**
 * Size and modification time of every file the build reads, and of every
 * folder of src/, keyed by path under the repository. Equal fingerprints mean
 * dist/ was built from these very files: an edit changes a file's entry, and a
 * new, deleted or renamed file changes its folder's.
 */
export function sourceFingerprint() {
  const entries = { src: entry(SRC) };
  for (const rel of readdirSync(SRC, { recursive: true })) entries[`src/${rel}`] = entry(`${SRC}/${rel}`);
  for (const file of RECIPE) entries[file.slice(ROOT.length)] = entry(file);
  return entries;
}

/** The same entries for other files the build read, given by path under the repository. */
export function filesFingerprint(relativePaths) {
  return Object.fromEntries(relativePaths.map((rel) => [rel, entry(`${ROOT}${rel}`)]));
}

function entry(file) {
  const st = statSync(file);
  return [st.isDirectory() ? "dir" : st.size, st.mtimeMs];
}

/**
 * True when dist/ holds a build of exactly the current sources. Stats only the
 * recorded paths (a couple of milliseconds; walking src/ would cost ten).
 */
export function compiledIsFresh() {
  if (!existsSync(ENTRY)) return false;
  try {
    const built = JSON.parse(readFileSync(STAMP, "utf8")).files;
    for (const [rel, [size, mtimeMs]] of Object.entries(built)) {
      const [nowSize, nowMtimeMs] = entry(`${ROOT}${rel}`);
      if (nowSize !== size || nowMtimeMs !== mtimeMs) return false;
    }
    return true;
  } catch {
    // A path recorded at build time is gone, or the stamp is unreadable.
    return false;
  }
}
