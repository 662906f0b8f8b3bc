import type { ImportJobDefinitionInput, Transform } from "../../../config/import-job.ts";
import type { ColumnSuggestion } from "../../../suggest/suggestion.ts";
import type { UploadAnswer } from "../api-contract.ts";

/** A column of the file as the mapping table shows it. */
export interface PageColumn {
  column: string;
  /** Which of the columns of that name (1-based), when the header repeats. */
  occurrence: number | undefined;
  /** The target the suggestion chose, as its menu's value ("" for none). */
  suggestedKey: string;
  suggestedTransforms: Transform[];
  confidence: number;
  why: ColumnSuggestion["why"];
  note: string;
  /** Its first values, to recognise it by. */
  values: string[];
}

/** What the page holds between requests. */
export const page: {
  upload: UploadAnswer | null;
  /** The suggestion's definition, which the mapping on the page changes. */
  base: ImportJobDefinitionInput | null;
  columns: PageColumn[];
  /** The job whose run the page follows. */
  following: string | null;
} = { upload: null, base: null, columns: [], following: null };
