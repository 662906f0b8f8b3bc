/**
 * Mapping suggestions: how a file's columns map onto a person, shared by
 * `recruit-sync jobs suggest` and the console's mapping page. See docs/suggest.md.
 */
export { readSample, SAMPLE_ROWS } from "./read-sample.ts";
export { jobNameOf, STUDY_PLACEHOLDER, type SuggestOptions, suggestMapping } from "./suggest-mapping.ts";
export {
  ColumnSuggestion,
  MappingSuggestion,
  SUGGESTION_SOURCES,
} from "./suggestion.ts";
export { suggestionYaml } from "./suggestion-yaml.ts";
export { fetchWorkspaceProperties } from "./workspace-properties.ts";

import { readSample, SAMPLE_ROWS } from "./read-sample.ts";
import { type SuggestOptions, suggestMapping } from "./suggest-mapping.ts";
import type { MappingSuggestion } from "./suggestion.ts";

/**
 * Reads the first `rows` rows of a file and suggests its mapping.
 *
 * @example
 * const s = await suggestMappingForFile("contacts.csv", { name: "contacts" });
 * if (s.definition) console.log(suggestionYaml(s, s.definition));
 */
export async function suggestMappingForFile(
  file: string,
  options: SuggestOptions & { rows?: number },
): Promise<MappingSuggestion> {
  const records = await readSample(file, options.rows ?? SAMPLE_ROWS);
  return suggestMapping(records, { fileName: file, ...options });
}
