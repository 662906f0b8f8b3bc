/**
 * Runs one import and kills its own process (SIGKILL, no cleanup) once
 * `killAfter` batches are recorded in the ledger: a crash between batches.
 * argv: JSON of KillChildArgs (helpers.ts, which runs this file through runKillChild).
 */
import { Redis } from "ioredis";
import { createClient } from "../../src/api/index.ts";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { runImport, tokenFingerprint } from "../../src/imports/index.ts";
import type { KillChildArgs } from "./helpers.ts";

const args = JSON.parse(process.argv[2] ?? "{}") as KillChildArgs;
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
