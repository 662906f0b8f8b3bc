import { writeAboveProgress } from "./terminal-guard.ts";

const LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO ",
  40: "WARN ",
  50: "ERROR",
  60: "FATAL",
};

/**
 * String fields shown on a terminal. Any other string stays out: a field
 * nobody listed here might hold an address, a phone number or a token. Numbers
 * and booleans are shown whatever their key (redaction has already blanked
 * the contact fields pino knows of).
 */
const SHOWN_STRINGS = new Set([
  "code",
  "operationId",
  "resource",
  "runId",
  "job",
  "jobId",
  "queue",
  "status",
  "phase",
  "state",
  "signal",
  "resumeAt",
  "origin",
  "table",
  "kind",
]);
const SKIPPED = new Set(["level", "time", "pid", "hostname", "name", "msg", "v"]);

/** One pino JSON record as a short line: time, level, message and a few safe fields. */
export function humanLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.trimEnd();
  }
  const time = typeof rec.time === "number" ? new Date(rec.time).toTimeString().slice(0, 8) : "";
  const level = LEVELS[Number(rec.level)] ?? "LOG  ";
  const fields: string[] = [];
  for (const [key, value] of Object.entries(rec)) {
    if (SKIPPED.has(key)) continue;
    if (typeof value === "number" || typeof value === "boolean") fields.push(`${key}=${value}`);
    else if (typeof value === "string" && SHOWN_STRINGS.has(key)) fields.push(`${key}=${value}`);
  }
  // An error's code says which row of docs/errors.md applies; its message may quote input, so it stays out.
  const err = rec.err as { code?: unknown; type?: unknown } | undefined;
  if (err && typeof err === "object") {
    const code =
      typeof err.code === "string" ? err.code : typeof err.type === "string" ? err.type : undefined;
    if (code) fields.push(`error=${code}`);
  }
  const msg = typeof rec.msg === "string" ? rec.msg : "";
  return `${time} ${level} ${msg}${fields.length ? `  ${fields.join(" ")}` : ""}`;
}

/** A pino destination that writes human lines to a terminal, lifting a progress bar out of the way. */
export function humanDestination(out: { write(chunk: string): unknown } = process.stderr) {
  return {
    write(chunk: string): void {
      for (const record of chunk.split("\n")) {
        if (!record) continue;
        writeAboveProgress(() => out.write(`${humanLine(record)}\n`));
      }
    },
  };
}
