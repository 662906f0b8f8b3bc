import { requestCursor } from "../../api/index.ts";
import { decodeCursor, pageOf } from "../paging.ts";
import type { Handler } from "./handler-types.ts";

export const searchSegments: Handler<"searchSegments"> = ({ store }, { body }) => {
  const offset = decodeCursor(requestCursor(body.pageInfo), ["pageInfo", "startCursor"]);
  return pageOf(store.segments, offset, body.pageInfo?.size, (s) => s);
};
