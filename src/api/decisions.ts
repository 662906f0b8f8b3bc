/**
 * Defaults for every place the spec leaves a name, unit or limit open ("not
 * shown"). The client and the emulator both read these, so they cannot drift.
 * Each one has a row in docs/spec-decisions.md.
 */
export const SPEC_DEFAULTS = {
  /** Request field of the import body that selects the matching key. */
  importIdentifierField: "identifier",
  /** Request field of the import body that names the population. */
  importPopulationField: "populationId",
  /** Key inside a search body's pageInfo that carries the cursor to start from. */
  searchCursorField: "startCursor",
  /** Query parameter names of GET /property-groups/{id}/properties. */
  propertyGroupCursorParam: "cursor",
  propertyGroupPageSizeParam: "pageSize",
  /** Page sizes. The property-group maximum of 100 is the spec's; the rest are ours. */
  defaultPageSize: 25,
  maxSearchPageSize: 100,
  maxPropertyGroupPageSize: 100,
  /** People accepted in one import request (the spec gives no maximum). */
  maxPeoplePerImport: 1000,
  /** Success status of every operation whose status the spec does not show. */
  successStatus: 200,
} as const;

/** Units the X-RateLimit-Reset header may use; "auto" detects per response. */
export const RESET_UNITS = ["auto", "delta-seconds", "epoch-seconds", "epoch-milliseconds"] as const;
export type ResetUnit = (typeof RESET_UNITS)[number];
