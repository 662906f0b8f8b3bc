import { z } from "zod";
import type { OperationId } from "../../api/index.ts";

/**
 * Operations whose request bodies the emulator checks with z.compile's
 * generated parser of the same schema rather than the interpreted one. An
 * import body holds up to 1,000 people of up to nine fields each, and the
 * interpreted parser runs a schema node and builds a result object per field:
 * it took 0.6-0.9 s of the emulator's 3.5-4.7 s of CPU for 300 such bodies
 * (bench/emulator-import-bench.ts), the generated one ~0.2 s. A body the
 * generated parser does not accept goes to the schema's own parser, so a
 * refused body gets the same issues, in the same order, as before.
 */
const COMPILED = new Set<OperationId>(["importParticipants"]);

/** The schema to check an operation's body with: `schema` itself, or its compiled clone. */
export function bodySchemaFor<S extends z.ZodType>(operationId: OperationId, schema: S): S {
  return COMPILED.has(operationId) ? z.compile(schema) : schema;
}
