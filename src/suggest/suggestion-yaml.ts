import { Document, isMap, isSeq } from "yaml";
import type { ImportJobDefinitionInput } from "../config/import-job.ts";
import { STUDY_PLACEHOLDER } from "./suggest-mapping.ts";
import type { ColumnSuggestion, MappingSuggestion } from "./suggestion.ts";

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

function why(c: ColumnSuggestion): string {
  return ` ${c.why}, ${c.confidence.toFixed(2)}: ${oneLine(c.note)}`;
}

/**
 * A suggestion as a job file: the definition, each mapped column with a
 * comment saying where its mapping came from and how sure it is, and the
 * columns left unmapped with why. Headers only; no cell is ever written.
 *
 * @example
 * process.stdout.write(suggestionYaml(suggestion, definition));
 */
export function suggestionYaml(suggestion: MappingSuggestion, definition: ImportJobDefinitionInput): string {
  const doc = new Document(definition);
  const intro = [
    ` Suggested from the file's ${suggestion.header ? "headers and " : ""}values by recruit-sync jobs suggest.`,
    " Check each column, then save as jobs/<name>.yaml and run recruit-sync jobs validate.",
  ];
  if (definition.target.studyId === STUDY_PLACEHOLDER) {
    intro.push(` target.studyId is ${STUDY_PLACEHOLDER}: name the study to import into (or give --study).`);
  }
  const unmapped = suggestion.columns.filter((c) => c.to === null);
  if (unmapped.length > 0) {
    intro.push(" Not mapped (add a columns entry to send one as a property):");
    for (const c of unmapped) intro.push(`   ${oneLine(c.column)}:${why(c)}`);
  }
  doc.commentBefore = intro.join("\n");
  const columns = doc.get("columns");
  if (isSeq(columns)) {
    const mapped = suggestion.columns.filter((c) => c.to !== null);
    columns.items.forEach((item, i) => {
      const c = mapped[i];
      if (!isMap(item) || !c) return;
      item.commentBefore = why(c);
      const to = item.get("to", true);
      if (isMap(to)) to.flow = true;
      const transforms = item.get("transforms", true);
      if (isSeq(transforms)) transforms.flow = true;
    });
  }
  return doc.toString({ lineWidth: 0 });
}
