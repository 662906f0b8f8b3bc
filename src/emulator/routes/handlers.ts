import type { Permission } from "../../api/index.ts";
import { searchEmails } from "./email-search.ts";
import type { Handlers } from "./handler-types.ts";
import { getCustomIncentive, getIncentive } from "./incentive-handlers.ts";
import { importParticipants, searchParticipants } from "./participant-handlers.ts";
import { legacyOptOut, updateOptedOut } from "./people-handlers.ts";
import { deleteProperties, listPropertyGroupProperties } from "./property-handlers.ts";
import { createScreenerQuestion, getScreener, replaceScreener } from "./screener-handlers.ts";
import { searchSegments } from "./segment-handlers.ts";
import { updateStudy } from "./study-handlers.ts";

/** Every operation of the endpoint table; the type makes a missing one a compile error. */
export const handlers: Handlers = {
  replaceScreener,
  getScreener,
  updateStudy,
  importParticipants,
  searchParticipants,
  createScreenerQuestion,
  updateOptedOut,
  deleteProperties,
  listPropertyGroupProperties,
  getIncentive,
  getCustomIncentive,
  searchEmails,
  searchSegments,
  legacyOptOut,
};

/**
 * Permissions the emulator demands beyond the endpoint table's: reading or
 * writing a screener needs read_screeners, since a caller without it must not
 * see screeners (spec 5) and the screener operations return one.
 */
export const EXTRA_PERMISSIONS: Partial<Record<keyof Handlers, readonly Permission[]>> = {
  getScreener: ["read_screeners"],
  replaceScreener: ["read_screeners"],
  createScreenerQuestion: ["read_screeners"],
};
