import type { ImportPerson } from "../../api/index.ts";
import type { RowIssue } from "../row-issue.ts";

/**
 * A value left out of an imported person under `invalidOptionalValues: drop`.
 * `message` says what is wrong without quoting the value, which may be personal data.
 */
export interface DroppedValue {
  /** The person field (`phone`), or the property (`property property_5`, `property "Company"`). */
  field: string;
  /** The file's header of the column it came from. */
  column: string;
  code: string;
  message: string;
}

/** What a row of the file became: a person to send, or the issues that reject it. */
export type MappedRow =
  | {
      ok: true;
      person: ImportPerson;
      key: string;
      population: string | null;
      /** Present only when a failing optional value was left out. */
      dropped?: DroppedValue[];
      /** The row said the person is not opted out, and it was not sent (the job has no `optIn: allow`). */
      optInHeldBack?: true;
    }
  | { ok: false; issues: RowIssue[] };
