import type { Screener, Study } from "../../api/index.ts";
import { badRequest, notDraft, notFound, validationFailed } from "../http-error.ts";
import { buildQuestion, newNativeScreener, UnknownTemplateError } from "../screener-builder.ts";
import type { Store } from "../store/store.ts";
import type { Handler } from "./handler-types.ts";

/**
 * The checks every screener operation shares, in the order the spec implies:
 * the study exists; any status but DRAFT is a 409 whatever the study (spec
 * 3.1 "in any other status they answer 409"); survey studies and non-native
 * screeners are refused as bad requests (GET lists only 400 plain text for them).
 */
function manageableStudy(store: Store, studyId: string): { study: Study; screener: Screener | undefined } {
  const study = store.studies.get(studyId);
  if (!study) throw notFound("Study");
  if (study.status !== "DRAFT") throw notDraft();
  if (study.studyType === "SURVEY") throw badRequest("Screeners are not available for survey studies");
  const screener = store.screeners.get(studyId);
  if (screener && screener.type !== "NATIVE") throw badRequest("Only native screeners can be managed");
  return { study, screener };
}

function withTemplatePath<T>(path: (string | number)[], build: () => T): T {
  try {
    return build();
  } catch (err) {
    if (err instanceof UnknownTemplateError) {
      throw validationFailed([{ message: err.message, path: [...path, "questionTemplateId"] }]);
    }
    throw err;
  }
}

export const getScreener: Handler<"getScreener"> = ({ store }, { params }) => {
  const { screener } = manageableStudy(store, params.studyId);
  if (!screener) throw notFound("Screener");
  return screener;
};

export const replaceScreener: Handler<"replaceScreener"> = ({ store, clock }, { params, body }) => {
  const { study, screener: existing } = manageableStudy(store, params.studyId);
  const now = clock.nowIso();
  // Build every question before touching the store: one bad template leaves the screener as it was.
  const questions = body.questions.map((q, i) =>
    withTemplatePath(["questions", i], () => buildQuestion(store, q)),
  );
  const screener: Screener = existing ?? newNativeScreener(store, study.studyId, now);
  // Whole replacement: omitted top-level fields take their defaults (the schema applied them).
  screener.showSchedulerToQualified = body.showSchedulerToQualified;
  screener.qualifyByDefault = body.qualifyByDefault;
  screener.questions = questions;
  screener.updatedAt = now;
  if (!existing) {
    store.screeners.set(study.studyId, screener);
    study.studyPlan.includeScreener = true;
  }
  return screener;
};

export const createScreenerQuestion: Handler<"createScreenerQuestion"> = (
  { store, clock },
  { params, body },
) => {
  const { study, screener: existing } = manageableStudy(store, params.studyId);
  if (existing && existing.questions.length >= 50) {
    throw badRequest("A screener holds at most 50 questions");
  }
  const question = withTemplatePath([], () => buildQuestion(store, body));
  const now = clock.nowIso();
  let screener = existing;
  if (!screener) {
    screener = newNativeScreener(store, study.studyId, now);
    store.screeners.set(study.studyId, screener);
    study.studyPlan.includeScreener = true;
  }
  screener.questions.push(question);
  screener.updatedAt = now;
  return question;
};
