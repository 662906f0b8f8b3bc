import { readFile } from "node:fs/promises";
import { UsageError } from "../errors/index.ts";

/** A file of emails and phones, one a line (blank lines and `#` comments skipped); a first cell of a CSV line counts. */
export async function readIdentifierFile(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new UsageError(
      `forget: cannot read --file ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  return text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => (l.includes("@") ? (l.split(/[,;\t]/).find((c) => c.includes("@")) ?? l) : l).trim());
}
