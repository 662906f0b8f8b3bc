import path from "node:path";
import type { MappingSuggestion } from "./preset-suggestion.ts";
// The suggestion library (src/suggest) takes this place once it is on main: this import becomes
// `import { suggestMappingForFile } from "../../suggest/index.ts";` and nothing else changes.
import { suggestFromPresets as suggestMappingForFile } from "./preset-suggestion.ts";

export type { MappingSuggestion };

/** A job name from a file name: "HubSpot Export (2).csv" → "hubspot-export-2". */
export function jobNameOf(fileName: string): string {
  const name = path
    .basename(fileName, path.extname(fileName))
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return name === "" ? "uploaded-import" : name;
}

/**
 * The job definition suggested for an uploaded file, with each column's
 * target and how sure the suggestion is; `fileName` is the name the sender
 * gave the file, which names the job.
 */
export async function suggestForUpload(
  file: string,
  fileName: string | undefined,
): Promise<MappingSuggestion> {
  const name = jobNameOf(fileName ?? "uploaded-import");
  return suggestMappingForFile(file, { name, fileName: fileName ?? "upload.csv" });
}
