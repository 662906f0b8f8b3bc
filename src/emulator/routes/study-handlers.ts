import { notFound } from "../http-error.ts";
import type { Handler } from "./handler-types.ts";

/** Only provided fields change; the incentive object is merged field by field too (spec 4.3). */
export const updateStudy: Handler<"updateStudy"> = ({ store, grant }, { params, body }) => {
  const study = store.studies.get(params.studyId);
  if (!study) throw notFound("Study");
  const plan = study.studyPlan;
  for (const [key, value] of Object.entries(body.studyPlan)) {
    if (value === undefined) continue;
    if (key === "incentive" && typeof value === "object" && value !== null) {
      const merged: Record<string, unknown> = { ...(plan.incentive ?? {}) };
      for (const [k, v] of Object.entries(value)) if (v !== undefined) merged[k] = v;
      plan.incentive = merged;
    } else {
      plan[key] = value;
    }
  }
  const screener = grant.permissions.has("read_screeners")
    ? (store.screeners.get(study.studyId) ?? null)
    : null;
  return { ...study, screener };
};
