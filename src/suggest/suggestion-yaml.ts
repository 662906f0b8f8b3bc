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

/** What importing the sampled rows would do, in a line or three. */
function outcomeLines(suggestion: MappingSuggestion): string[] {
  const o = suggestion.outcome;
  if (!o) return [];
  if (o.stopped) return [` As suggested, the import would stop before the first row: ${oneLine(o.stopped)}`];
  const lines = [
    ` On the ${o.rows} sampled rows: ${o.imported} would import, ${o.rejected} would be rejected` +
      (o.optedOut > 0 || o.heldBack > 0
        ? `; ${o.optedOut} opted out, ${o.heldBack} "not opted out" held back`
        : "") +
      (o.droppedValues > 0 ? `; ${o.droppedValues} invalid values left out` : "") +
      ".",
  ];
  for (const r of o.topReasons) lines.push(`   ${r.rows}× ${oneLine(r.reason)}`);
  if (o.wouldRefuse)
    lines.push(" A run would refuse this file: more than half of its first rows are rejected.");
  return lines;
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
  intro.push(...outcomeLines(suggestion));
  if (suggestion.identifier) intro.push(` Identifier ${oneLine(suggestion.identifier.reason)}.`);
  const country = suggestion.phoneCountry;
  if (country) {
    intro.push(
      country.country
        ? ` Phone country ${country.country} (from ${country.from}): ${oneLine(country.reason)}. Override with phoneCountry (or --phone-country).`
        : ` No phone country: ${oneLine(country.reason)}.`,
    );
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
