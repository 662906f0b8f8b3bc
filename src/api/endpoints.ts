import { z } from "zod";
import {
  CustomIncentive,
  DeletePropertiesBody,
  DeletePropertiesResult,
  EmailMessage,
  ImportParticipantsBody,
  ImportResult,
  Incentive,
  LegacyOptOutBody,
  LegacyOptOutResult,
  OptedOutResult,
  Participant,
  PersonProperty,
  PropertyGroupQuery,
  pagedResponse,
  Question,
  QuestionRequest,
  ReplaceScreenerBody,
  Screener,
  SearchEmailsBody,
  SearchParticipantsBody,
  SearchSegmentsBody,
  Segment,
  Study,
  UpdateOptedOutBody,
  UpdateStudyBody,
} from "./schemas/index.ts";

export const PERMISSIONS = [
  "view_emails",
  "access_all_people",
  "read_screeners",
  "view_incentive_recipients",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH";

/**
 * One operation of the service. The client, the emulator and the OpenAPI
 * document are all built from these entries.
 */
export interface Endpoint<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  operationId: string;
  summary: string;
  specSection: string;
  method: HttpMethod;
  /** Relative to the base URL (which includes /api/public/v1); `{name}` marks a path parameter. */
  path: string;
  params: P;
  query: Q;
  body: B;
  response: R;
  successStatus: number;
  errorStatuses: readonly number[];
  /** Statuses on which the spec lists the X-RateLimit-* headers explicitly. */
  rateLimitHeaderStatuses: readonly number[];
  permissions: readonly Permission[];
  deprecated: boolean;
  /**
   * Whether a failed attempt may be sent again after a 5xx or a dropped
   * connection. 429s are always retried: the service refused before acting.
   */
  retrySafe: boolean;
}

const NoParams = z.object({});
const NoQuery = z.object({});
const NoBody = z.undefined();
const studyParams = z.object({ studyId: z.string().min(1) });

function endpoint<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
  e: Omit<Endpoint<P, Q, B, R>, "rateLimitHeaderStatuses" | "deprecated" | "permissions" | "successStatus"> &
    Partial<
      Pick<Endpoint<P, Q, B, R>, "rateLimitHeaderStatuses" | "deprecated" | "permissions" | "successStatus">
    >,
): Endpoint<P, Q, B, R> {
  return {
    successStatus: 200,
    deprecated: false,
    permissions: [],
    rateLimitHeaderStatuses: [200, ...e.errorStatuses],
    ...e,
  };
}

export const endpoints = {
  replaceScreener: endpoint({
    operationId: "replaceScreener",
    summary: "Replace a study's screener",
    specSection: "4.1",
    method: "PUT",
    path: "/studies/{studyId}/screener",
    params: studyParams,
    query: NoQuery,
    body: ReplaceScreenerBody,
    response: Screener,
    errorStatuses: [400, 401, 403, 404, 409, 429, 500],
    rateLimitHeaderStatuses: [200, 401, 403, 409, 429, 500],
    retrySafe: true,
  }),
  getScreener: endpoint({
    operationId: "getScreener",
    summary: "Get a study's screener",
    specSection: "4.2",
    method: "GET",
    path: "/studies/{studyId}/screener",
    params: studyParams,
    query: NoQuery,
    body: NoBody,
    response: Screener,
    errorStatuses: [400, 401, 403, 404, 409, 429, 500],
    retrySafe: true,
  }),
  updateStudy: endpoint({
    operationId: "updateStudy",
    summary: "Update a study",
    specSection: "4.3",
    method: "PATCH",
    path: "/studies/{studyId}",
    params: studyParams,
    query: NoQuery,
    body: UpdateStudyBody,
    response: Study,
    errorStatuses: [400, 401, 403, 404, 429, 500],
    retrySafe: true,
  }),
  importParticipants: endpoint({
    operationId: "importParticipants",
    summary: "Import participants into a study",
    specSection: "4.4",
    method: "POST",
    path: "/studies/{studyId}/participants/import",
    params: studyParams,
    query: NoQuery,
    body: ImportParticipantsBody,
    response: ImportResult,
    errorStatuses: [400, 401, 403, 404, 429, 500],
    // Matching by identifier makes a repeated import converge on the same state.
    retrySafe: true,
  }),
  searchParticipants: endpoint({
    operationId: "searchParticipants",
    summary: "List participants of a study",
    specSection: "4.5",
    method: "POST",
    path: "/studies/{studyId}/participants/search",
    params: studyParams,
    query: NoQuery,
    body: SearchParticipantsBody,
    response: pagedResponse(Participant),
    errorStatuses: [400, 401, 403, 404, 429, 500],
    retrySafe: true,
  }),
  createScreenerQuestion: endpoint({
    operationId: "createScreenerQuestion",
    summary: "Create a screener question",
    specSection: "4.6",
    method: "POST",
    path: "/studies/{studyId}/screener/questions",
    params: studyParams,
    query: NoQuery,
    body: QuestionRequest,
    response: Question,
    errorStatuses: [400, 401, 403, 404, 409, 429, 500],
    // Appends: sending it twice adds the question twice.
    retrySafe: false,
  }),
  updateOptedOut: endpoint({
    operationId: "updateOptedOut",
    summary: "Update a person's opted-out status",
    specSection: "4.7",
    method: "PUT",
    path: "/people/{personIdOrEmail}/opted-out",
    params: z.object({ personIdOrEmail: z.string().min(1) }),
    query: NoQuery,
    body: UpdateOptedOutBody,
    response: OptedOutResult,
    errorStatuses: [400, 401, 403, 404, 429, 500],
    retrySafe: true,
  }),
  deleteProperties: endpoint({
    operationId: "deleteProperties",
    summary: "Delete person properties in bulk",
    specSection: "4.8",
    method: "POST",
    path: "/properties/delete",
    params: NoParams,
    query: NoQuery,
    body: DeletePropertiesBody,
    response: DeletePropertiesResult,
    errorStatuses: [400, 401, 403, 429, 500],
    retrySafe: true,
  }),
  listPropertyGroupProperties: endpoint({
    operationId: "listPropertyGroupProperties",
    summary: "List the properties of a property group",
    specSection: "4.9",
    method: "GET",
    path: "/property-groups/{propertyGroupId}/properties",
    params: z.object({ propertyGroupId: z.string().min(1) }),
    query: PropertyGroupQuery,
    body: NoBody,
    response: pagedResponse(PersonProperty),
    errorStatuses: [400, 401, 403, 404, 429, 500],
    retrySafe: true,
  }),
  getIncentive: endpoint({
    operationId: "getIncentive",
    summary: "Get an incentive",
    specSection: "4.10",
    method: "GET",
    path: "/incentives/{incentiveId}",
    params: z.object({ incentiveId: z.string().min(1) }),
    query: NoQuery,
    body: NoBody,
    response: Incentive,
    errorStatuses: [401, 403, 404, 429, 500],
    retrySafe: true,
  }),
  getCustomIncentive: endpoint({
    operationId: "getCustomIncentive",
    summary: "Get a custom incentive",
    specSection: "4.11",
    method: "GET",
    path: "/incentives/custom/{customIncentiveId}",
    params: z.object({ customIncentiveId: z.string().min(1) }),
    query: NoQuery,
    body: NoBody,
    response: CustomIncentive,
    errorStatuses: [401, 403, 404, 429, 500],
    retrySafe: true,
  }),
  searchEmails: endpoint({
    operationId: "searchEmails",
    summary: "Search email messages",
    specSection: "4.12",
    method: "POST",
    path: "/messages/emails/search",
    params: NoParams,
    query: NoQuery,
    body: SearchEmailsBody,
    response: pagedResponse(EmailMessage),
    errorStatuses: [400, 401, 403, 429, 500],
    permissions: ["view_emails", "access_all_people"],
    retrySafe: true,
  }),
  searchSegments: endpoint({
    operationId: "searchSegments",
    summary: "List segments",
    specSection: "4.13",
    method: "POST",
    path: "/segments/search",
    params: NoParams,
    query: NoQuery,
    body: SearchSegmentsBody,
    response: pagedResponse(Segment),
    errorStatuses: [400, 401, 403, 429, 500],
    retrySafe: true,
  }),
  legacyOptOut: endpoint({
    operationId: "legacyOptOut",
    summary: "Update a person's opted-out status (deprecated)",
    specSection: "4.14",
    method: "POST",
    path: "/person",
    params: NoParams,
    query: NoQuery,
    body: LegacyOptOutBody,
    response: LegacyOptOutResult,
    errorStatuses: [400, 401, 403, 404, 429, 500],
    deprecated: true,
    retrySafe: true,
  }),
} as const;

export type Endpoints = typeof endpoints;
export type OperationId = keyof Endpoints;
export const OPERATION_IDS = Object.keys(endpoints) as OperationId[];

/** Replaces `{name}` in a path template with URI-encoded values. */
export function fillPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined) throw new TypeError(`missing path parameter ${name}`);
    return encodeURIComponent(v);
  });
}
