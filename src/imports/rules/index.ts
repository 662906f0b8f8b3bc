/**
 * The mapping rules: how a file's rows become people, as plain data in and
 * plain data out. No thread, no typed array, no Redis, no file: the source
 * of mapped rows (on either thread) and the person store call these, and
 * each rule is tested alone with plain values (test/imports/rules/).
 *
 * 1. The header plan, once per file: the header row and the job's mapping
 *    give a column plan (planColumns: the job's columns by name, occurrence
 *    or position, then a preset's synonyms, the population and what is left
 *    unmapped), settled into a row plan (planRow); planHeader makes both.
 * 2. A row: its cells and the row plan give a person to send or the issues
 *    that reject it (mapRow): each cell read (readCell, the multi-value
 *    split), put through its column's transforms and into its field
 *    (assemblePerson), the population resolved, the person checked against
 *    the contract (checkPerson).
 * 3. A person seen in several rows: rows of one population and identifier
 *    value are one person (identifierKey, dedupeKey), and their versions
 *    merge into one, the later winning field by field (mergePersons).
 *
 * @example
 * const { plan } = planHeader(def, ["Email", "Name"]);
 * const mapped = mapRow(plan, ["ann@example.org", "Ann"], 2);
 * // { ok: true, person: { email: "ann@example.org", … }, key: "ann@example.org", population: null }
 */

export { assemblePerson } from "./assemble-person.ts";
export { checkPerson, SURELY_VALID } from "./check-person.ts";
export {
  type ColumnPlan,
  describeTarget,
  feedsIdentifier,
  type PlannedColumn,
  type PopulationPlan,
  planColumns,
} from "./column-plan.ts";
export { splitFullName } from "./full-name.ts";
export { describeHeaders, looksLikeDataRow, looksLikeValue } from "./header-echo.ts";
export { HeaderLookup, normalizeHeader } from "./header-lookup.ts";
export { headersOf, isBlank, planHeader } from "./header-row.ts";
export { identifierKey, identifierSelector } from "./identifier.ts";
export { createRowMapper, isShortRow, mapRow, padShortRow, type RowMapper } from "./map-row.ts";
export type { MappedRow } from "./mapped-row.ts";
export { dedupeKey, mergePersons } from "./merge-person.ts";
export { mayHoldSeveral, saysNoValue, splitValues } from "./multi-value.ts";
export { PRESETS, type Preset, type PresetRule } from "./presets/index.ts";
export { type CellRead, cellFailed, readCell } from "./read-cell.ts";
export { resolvePopulation, unknownPopulation } from "./resolve-population.ts";
export {
  type ColumnKind,
  type ColumnStep,
  KIND_FULL_NAME,
  KIND_LIST,
  KIND_OPTED_OUT,
  KIND_PROPERTY,
  KIND_SCALAR,
  MULTI_EMAILS,
  MULTI_NONE,
  MULTI_PHONES,
  type MultiValue,
  planRow,
  type RowPlan,
} from "./row-plan.ts";
export * from "./transforms/index.ts";
