/**
 * Self time of a V8 .cpuprofile, by function and by file, top N: where a
 * bench's run spent its CPU.
 *   npx tsx bench/cpu-profile-summary.ts FILE.cpuprofile [N]
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const profile = JSON.parse(readFileSync(process.argv[2] as string, "utf8")) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const top = Number(process.argv[3] ?? 15);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  const frame = byId.get(id)?.callFrame;
  if (!frame) return;
  total += dt;
  const file = frame.url.replace(/^.*\/(node_modules\/|src\/)/, "$1") || "(native)";
  const fn = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
  byFile.set(file, (byFile.get(file) ?? 0) + dt);
});
const show = (title: string, m: Map<string, number>) => {
  console.log(`${title} (of ${(total / 1e6).toFixed(2)} s sampled):`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
  }
};
show("self time by file", byFile);
show("self time by function", byFunction);
