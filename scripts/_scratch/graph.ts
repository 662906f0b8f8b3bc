import { readFileSync } from "node:fs";
import path from "node:path";
const SRC = path.resolve("src") + "/";
const seen = new Map<string, string[]>(); const outside = new Set<string>();
const todo = [path.join(SRC, "imports/rules/index.ts")];
while (todo.length) { const f = todo.pop()!; if (seen.has(f)) continue; const s = readFileSync(f, "utf8"); seen.set(f, []);
  for (const m of s.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*"([^"]+)"/g)) { if (m[2]) continue; const names = /^\{([^}]*)\}$/.exec(m[3]!.trim())?.[1]; if (names?.split(",").map(n=>n.trim()).filter(Boolean).every(n=>n.startsWith("type "))) continue; const spec = m[4]!; if (spec.startsWith(".")) todo.push(path.resolve(path.dirname(f), spec)); else outside.add(spec); } }
console.log([...seen.keys()].map(f => path.relative(SRC, f)).sort().join("\n")); console.log([...outside]);
