import type { RuntimeConfig } from "../../config/index.ts";
import { type Enqueued, enqueueImport, type Queues } from "../../queue/index.ts";
import { opsRefusal } from "../ops-http-error.ts";
import { checkDefinition, type RunBody } from "./console-requests.ts";
import type { Upload } from "./upload-store.ts";

/**
 * Enqueues an import of the upload, with the mapping the page shows or a job
 * of jobs/, as `recruit-sync import` would, with origin `console`: the
 * workers run it like any other import, and must see the data folder at the
 * same path (the ops server's `paths.dataDir`).
 */
export async function enqueueUpload(
  config: RuntimeConfig,
  queues: Queues,
  upload: Upload,
  body: RunBody,
): Promise<Enqueued> {
  if (body.definition) checkDefinition(body.definition);
  try {
    return await enqueueImport(config, queues, {
      file: upload.file,
      origin: "console",
      ...(body.definition ? { definition: body.definition } : {}),
      ...(body.job ? { job: body.job } : {}),
      ...(body.study ? { study: body.study } : {}),
      ...(body.dryRun !== undefined ? { dryRun: body.dryRun } : {}),
    });
  } catch (err) {
    throw opsRefusal(err, "ops_invalid_request");
  }
}
