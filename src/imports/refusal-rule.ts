/**
 * When an import refuses a file before sending anything: the one rule the
 * import's gate, its dry run and `jobs suggest` apply alike.
 */

/** Rows read before the first request may go: enough to tell a file that is mostly wrong. */
export const GATE_ROWS = 1000;
/** More than this share of the rows that have an identifier rejected, and nothing is sent… */
const MOSTLY_REJECTED = 0.5;
/** …when at least this many such rows were read: fewer cannot tell a wrong file from a few bad rows. */
export const JUDGED_FROM_ROWS = 100;
/** Below this share of rows with any identifier at all, the identifier's column is the wrong one. */
const FEW_WITH_IDENTIFIER = 0.05;

export interface RefusalCounts {
  rowsRead: number;
  rejected: number;
  /** Rows rejected because their identifier is empty (code `missing_identifier`). */
  missingIdentifier: number;
}

/**
 * Whether the first rows say the file or its mapping is wrong. A row whose
 * identifier is empty is a person the file cannot name, not a sign of a
 * wrong mapping: a CRM export where half the people have no email is still
 * imported for the other half. So the share is taken over the rows that have
 * an identifier, and a file where almost none has one is refused as well.
 */
export function refusesFile(c: RefusalCounts): boolean {
  if (c.rowsRead < JUDGED_FROM_ROWS) return false;
  const named = c.rowsRead - c.missingIdentifier;
  if (named < c.rowsRead * FEW_WITH_IDENTIFIER) return true;
  if (named < JUDGED_FROM_ROWS) return false;
  return (c.rejected - c.missingIdentifier) / named > MOSTLY_REJECTED;
}
