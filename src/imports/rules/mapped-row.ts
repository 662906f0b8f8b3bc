import type { ImportPerson } from "../../api/index.ts";
import type { DroppedValue, RowProblem } from "../row-problem.ts";

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
  | { ok: false; issues: RowProblem[] };
