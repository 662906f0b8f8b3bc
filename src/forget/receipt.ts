import { randomUUID } from "node:crypto";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { FileRemoval } from "./scrub-files.ts";
import type { TableRemoval } from "./warehouse-sql.ts";

/** What one forget removed, where, and when: a hash of each identifier, never the identifier. */
export interface ForgetReceipt {
  kind: "forget";
  startedAt: string;
  finishedAt: string;
  /** SHA-256 of `recruit-sync forget\n` and each email (lower case) or phone's digits. */
  subjects: string[];
  warehouses: {
    warehouse: string;
    kind: "duckdb" | "postgres" | "file";
    tables: TableRemoval[];
    files?: FileRemoval[];
  }[];
  redis: { prefix: string; changeOnlyFields: number; unverifiedMarks: number } | { skipped: string };
  dataFolder: { folder: string; files: FileRemoval[] };
  /** The watched folders outside the data folder (config `watch`): dropped files, and the processed and failed archives. */
  watchedFolders: { folder: string; files: FileRemoval[] }[];
  /** `--opt-out`: the people opted out in the service, and those it did not know. */
  optOut?: { optedOut: number; notFound: number; failed: number };
  /** Where this receipt is. */
  receiptFile: string;
}

/** The folder of receipts under the data folder: left out of the search for the person. */
export const RECEIPTS_FOLDER = "forget-receipts";

/** Writes the receipt (0600, its folder 0700) and returns its path. */
export async function writeReceipt(
  dataDir: string,
  receipt: Omit<ForgetReceipt, "receiptFile">,
): Promise<string> {
  const dir = path.join(dataDir, RECEIPTS_FOLDER);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${receipt.finishedAt.replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}.json`);
  await writeFile(file, `${JSON.stringify({ ...receipt, receiptFile: file }, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return file;
}
