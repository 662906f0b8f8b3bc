import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { createRowMapper, planColumns } from "../../src/imports/index.ts";

/**
 * Which of issue 30's job keys and reader behaviours this build has. The
 * suggestion writes them whatever the build; a test that needs the import to
 * accept them end to end runs once the reader has them (until then vitest
 * lists it as skipped, under a name that says what it waits for).
 */
const base = { kind: "import", target: { studyId: "s", identifier: "email" } } as const;
const accepts = (patch: Record<string, unknown>) =>
  ImportJobDefinition.safeParse({ ...base, columns: [{ column: "Email", to: "email" }], ...patch }).success;

export const READER = {
  occurrence: accepts({
    columns: [{ column: "Email", occurrence: 1, to: "email" }],
  }),
  fullName: accepts({
    columns: [
      { column: "Email", to: "email" },
      { column: "Name", to: "fullName" },
    ],
  }),
  phoneCountryColumn: accepts({ phoneCountryColumn: "Country" }),
  /** Several columns `to: phone`: the first with a value is the phone, the others additional phones. */
  phoneFromSeveralColumns: accepts({
    target: { studyId: "s", identifier: "phone" },
    columns: [
      { column: "Mobile", to: "phone" },
      { column: "Office", to: "phone" },
    ],
  }),
  /** A row one empty cell wider than the header (a trailing delimiter) is read as the header's width. */
  trailingDelimiter: (() => {
    const def = ImportJobDefinition.parse({ ...base, columns: [{ column: "Email", to: "email" }] });
    return createRowMapper(planColumns(["Email"], def), def)(["a@example.org", ""], 2).ok;
  })(),
  /** An optional value that fails is dropped, the person kept, when the job says nothing. */
  dropByDefault: (() => {
    const def = ImportJobDefinition.parse({
      ...base,
      columns: [
        { column: "Email", to: "email" },
        { column: "Phone", to: "phone", transforms: ["phone"] },
      ],
    });
    return createRowMapper(planColumns(["Email", "Phone"], def), def)(["a@example.org", "12"], 2).ok;
  })(),
};
