import type { Question, QuestionRequest, Screener } from "../api/index.ts";
import type { Store } from "./store/store.ts";

type ConcreteRequest = Exclude<QuestionRequest, { category: "template" }>;

/** Thrown when a template request names no workspace template; the route layer reports it at `path`. */
export class UnknownTemplateError extends Error {
  readonly questionTemplateId: string;
  constructor(questionTemplateId: string) {
    super(`Question template ${questionTemplateId} not found`);
    this.questionTemplateId = questionTemplateId;
  }
}

/**
 * Turns a request question into the stored (response) question with a fresh
 * id. A template request is expanded into its concrete category, keeping only
 * the overrides the spec allows (name, description, isRequired) and the
 * questionTemplateId (spec 2.4, 2.5).
 */
export function buildQuestion(store: Store, req: QuestionRequest): Question {
  if (req.category === "template") {
    const template = store.questionTemplates.get(req.questionTemplateId);
    if (!template || template.question.category === "template") {
      throw new UnknownTemplateError(req.questionTemplateId);
    }
    const concrete: ConcreteRequest = {
      ...template.question,
      ...(req.name === undefined ? {} : { name: req.name }),
      ...(req.description === undefined ? {} : { description: req.description }),
      ...(req.isRequired === undefined ? {} : { isRequired: req.isRequired }),
    };
    return { ...concreteQuestion(store, concrete), questionTemplateId: req.questionTemplateId } as Question;
  }
  return concreteQuestion(store, req);
}

function concreteQuestion(store: Store, req: ConcreteRequest): Question {
  const base = {
    id: store.ids.next("question"),
    workspaceId: store.workspaceId,
    isRequired: req.isRequired,
    name: req.name,
    ...(req.description === undefined ? {} : { description: req.description }),
  };
  const options = (list: { value: string; mappedToPropertyOptionId?: string | undefined }[]) =>
    list.map((o) => ({
      id: store.ids.next("option"),
      value: o.value,
      ...(o.mappedToPropertyOptionId === undefined
        ? {}
        : { mappedToPropertyOptionId: o.mappedToPropertyOptionId }),
    }));
  const mapped = (id: string | undefined) => (id === undefined ? {} : { mappedToPropertyId: id });
  // An option question and a dropdown alike: fresh ids for the options, the rules copied.
  const choices = (q: Extract<ConcreteRequest, { category: "option" | "dropdown" }>) => ({
    options: options(q.options),
    rules: (q.rules ?? []).map((r) => ({ ...r })),
  });
  switch (req.category) {
    case "simple":
      return { ...base, category: "simple", type: req.type, ...mapped(req.mappedToPropertyId) };
    case "option":
      return {
        ...base,
        category: "option",
        type: req.type,
        ...mapped(req.mappedToPropertyId),
        randomizeOrder: req.randomizeOrder,
        includeOther: req.includeOther,
        ...(req.otherDisplayText === undefined ? {} : { otherDisplayText: req.otherDisplayText }),
        includeNoneOfTheAbove: req.includeNoneOfTheAbove,
        ...choices(req),
      };
    case "dropdown":
      return {
        ...base,
        category: "dropdown",
        type: "DROPDOWN",
        ...mapped(req.mappedToPropertyId),
        ...choices(req),
      };
    case "matrix":
      return {
        ...base,
        category: "matrix",
        type: "MATRIX",
        columns: [...req.columns],
        rows: req.rows.map((r) => ({ ...r })),
      };
  }
}

/** A new, empty native screener of a study. */
export function newNativeScreener(store: Store, studyId: string, nowIso: string): Screener {
  return {
    id: store.ids.next("screener"),
    workspaceId: store.workspaceId,
    studyId,
    type: "NATIVE",
    showSchedulerToQualified: false,
    qualifyByDefault: false,
    questions: [],
    createdAt: nowIso,
    updatedAt: nowIso,
  };
}

/** The property ids a screener maps responses to; such properties cannot be deleted. */
export function mappedPropertyIds(screener: Screener): string[] {
  const ids: string[] = [];
  for (const q of screener.questions) {
    if ("mappedToPropertyId" in q && typeof q.mappedToPropertyId === "string") ids.push(q.mappedToPropertyId);
    if (q.category === "matrix") {
      for (const r of q.rows ?? []) if (r.mappedToPropertyId) ids.push(r.mappedToPropertyId);
    }
  }
  return ids;
}
