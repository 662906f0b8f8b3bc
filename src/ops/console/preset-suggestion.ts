import type { ColumnMapping, ImportJobDefinitionInput, PresetName } from "../../config/import-job.ts";
import { validateImportJobDefinition } from "../../config/import-job.ts";
import { normalizeHeader, PRESETS, type PresetRule } from "../../imports/index.ts";
import { readUploadSample } from "./read-upload.ts";

/**
 * The shape of a mapping suggestion, as the page reads it: each column with
 * its target (null: left out), a confidence from 0 to 1 and why, and the
 * import job definition that follows (null, with `problems`, when no column
 * can identify a person).
 */
export interface MappingSuggestion {
  header: boolean;
  preset: PresetName | null;
  columns: {
    index: number;
    column: string;
    to: ColumnMapping["to"] | null;
    transforms: ColumnMapping["transforms"];
    confidence: number;
    why: "preset" | "header" | "values" | "property" | "none";
    note: string;
  }[];
  definition: ImportJobDefinitionInput | null;
  problems: { path: string; message: string }[];
}

/** The study a suggestion imports into until a person names it. */
export const STUDY_PLACEHOLDER = "CHANGE-ME";

function ruleFor(
  rules: readonly PresetRule[],
  header: string,
  taken: Set<PresetRule>,
): PresetRule | undefined {
  const key = normalizeHeader(header);
  return rules.find((r) => !taken.has(r) && r.headers.some((h) => normalizeHeader(h) === key));
}

/**
 * A stand-in for the suggestion library: the columns the CRM presets of
 * src/imports/presets name by header, whichever CRM's. Headers only, never
 * a cell.
 */
export async function suggestFromPresets(
  file: string,
  options: { name: string; studyId?: string; fileName?: string },
): Promise<MappingSuggestion> {
  const { headers } = await readUploadSample(file, 0);
  // Every preset's headers at once: telling the CRM apart is the suggestion library's work.
  const rules = Object.values(PRESETS).flatMap((p) => p.rules);
  const taken = new Set<PresetRule>();
  const fieldsTaken = new Set<string>();
  const columns: MappingSuggestion["columns"] = headers.map((column, index) => {
    const rule = ruleFor(rules, column, taken);
    const field = rule && typeof rule.to === "string" ? rule.to : undefined;
    if (!rule || (field && fieldsTaken.has(field) && !field.startsWith("additional"))) {
      return {
        index,
        column,
        to: null,
        transforms: [],
        confidence: 0.5,
        why: "none",
        note: "no CRM export names a column so",
      };
    }
    taken.add(rule);
    if (field) fieldsTaken.add(field);
    return {
      index,
      column,
      to: rule.to,
      transforms: [...rule.transforms],
      confidence: 0.8,
      why: "header",
      note: "a CRM export names this column so",
    };
  });
  const definition: ImportJobDefinitionInput = {
    kind: "import",
    name: options.name,
    target: { studyId: options.studyId ?? STUDY_PLACEHOLDER, identifier: "email" },
    columns: columns.flatMap((c) =>
      c.to === null ? [] : [{ column: c.column, to: c.to, transforms: c.transforms }],
    ),
  };
  const checked = validateImportJobDefinition(definition);
  return {
    header: true,
    preset: null,
    columns,
    definition: checked.ok ? definition : null,
    problems: checked.ok ? [] : checked.problems,
  };
}
