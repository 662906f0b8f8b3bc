import path from "node:path";
import { z } from "zod";
import { ConfigError, describeProblems, problemsOf } from "../errors/index.ts";
import { FileSinkOptions } from "./file/file-sink-options.ts";

export type WarehouseTarget =
  | { kind: "duckdb"; path: string }
  | { kind: "postgres"; url: string }
  | { kind: "file"; dir: string; options: FileSinkOptions };

/**
 * Reads a warehouse URL: `duckdb:PATH`, `postgres://…` (or `postgresql://…`),
 * `file:DIR` (options after `?`, e.g. `file:DIR?escapeFormulas=false`).
 * Anything else is a configuration error.
 */
export function parseWarehouseUrl(url: string): WarehouseTarget {
  const trimmed = url.trim();
  if (trimmed.startsWith("duckdb:")) {
    const path = trimmed.slice("duckdb:".length).replace(/^\/\/(?=\/)/, "");
    if (path) return { kind: "duckdb", path };
  } else if (/^postgres(ql)?:\/\//.test(trimmed)) {
    return { kind: "postgres", url: trimmed };
  } else if (trimmed.startsWith("file:")) {
    const [rest = "", query] = splitOnce(trimmed.slice("file:".length), "?");
    const dir = rest.replace(/^\/\/(?=\/)/, "");
    if (dir) return { kind: "file", dir, options: fileOptions(trimmed, query ?? "") };
  }
  throw new ConfigError(
    `warehouse URL "${trimmed.replace(/\/\/[^@/]*@/, "//***@")}" is not one of duckdb:PATH, postgres://…, file:DIR`,
    [{ path: "warehouse", message: "expected duckdb:PATH, postgres://… or file:DIR" }],
  );
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + separator.length)];
}

function fileOptions(url: string, query: string): FileSinkOptions {
  const parsed = FileSinkOptions.safeParse(Object.fromEntries(new URLSearchParams(query)));
  if (parsed.success) return parsed.data;
  const issues = problemsOf(parsed.error, {
    message: (i) =>
      i.code === "unrecognized_keys"
        ? `unknown option ${i.keys.join(", ")}: a file: URL takes escapeFormulas=true|false`
        : undefined,
  }).map((p) => ({ ...p, path: p.path ? `warehouse.${p.path}` : "warehouse" }));
  throw new ConfigError(`warehouse URL "${url}": ${describeProblems(issues)}`, issues);
}

/**
 * The one schema of a warehouse URL, for every boundary that takes one
 * (config files, job definitions, job data): valid exactly when
 * parseWarehouseUrl reads it, with its own words as the problem.
 */
export const WarehouseUrl = z.string().superRefine((url, ctx) => {
  try {
    parseWarehouseUrl(url);
  } catch (err) {
    const detail = err instanceof ConfigError ? err.issues[0]?.message : undefined;
    ctx.addIssue({ code: "custom", message: detail ?? "expected duckdb:PATH, postgres://… or file:DIR" });
  }
});

/**
 * A relative `duckdb:` or `file:` path means "from `base`" (the project
 * folder, for config files and the demo); absolute paths, `:memory:` and
 * database URLs are left as they are.
 */
export function anchorWarehouseUrl(url: string, base: string): string {
  const m = /^(duckdb:|file:)(.*)$/.exec(url);
  if (!m?.[1] || !m[2] || m[2] === ":memory:" || m[2].startsWith("//")) return url;
  const [pathPart, query] = m[2].split(/(?=\?)/, 2) as [string, string | undefined];
  return path.isAbsolute(pathPart) ? url : `${m[1]}${path.resolve(base, pathPart)}${query ?? ""}`;
}
