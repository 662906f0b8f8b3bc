/**
 * Runs one import and kills its own process (SIGKILL, no cleanup) once
 * `killAfter` batches are recorded in the ledger: a crash between batches.
 * argv: JSON {file, definition, baseUrl, token, redisUrl, prefix, rejectsFile, workDir, killAfter,
 * changes?}; with `changes` the run keeps the change-only state under the same prefix.
 */
import { Redis } from "ioredis";
import { createClient } from "../../src/api/index.ts";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { runImport, tokenFingerprint } from "../../src/imports/index.ts";

const args = JSON.parse(process.argv[2] ?? "{}") as {
  file: string;
  definition: unknown;
  baseUrl: string;
  token: string;
  redisUrl: string;
  prefix: string;
  rejectsFile: string;
  workDir: string;
  killAfter: number;
  changes?: boolean;
};
const redis = new Redis(args.redisUrl, { maxRetriesPerRequest: null });
let finished = 0;
await runImport({
  file: args.file,
  definition: ImportJobDefinition.parse(args.definition),
  client: createClient({ baseUrl: args.baseUrl, token: args.token, retry: { maxAttempts: 1 } }),
  rejectsFile: args.rejectsFile,
  workDir: args.workDir,
  ledger: { redis, prefix: args.prefix },
  ...(args.changes
    ? {
        changes: {
          redis,
          prefix: args.prefix,
          service: { baseUrl: args.baseUrl, tokenFingerprint: tokenFingerprint(args.token) },
          full: false,
        },
      }
    : {}),
  onBatch: () => {
    if (++finished === args.killAfter) process.kill(process.pid, "SIGKILL");
  },
});
redis.disconnect();
