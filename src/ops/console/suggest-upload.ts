import { jobNameOf, type MappingSuggestion, suggestMappingForFile } from "../../suggest/index.ts";

export { jobNameOf, type MappingSuggestion };

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
