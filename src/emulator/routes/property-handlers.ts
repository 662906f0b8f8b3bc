import { SPEC_DEFAULTS, type ValidationErrorItem } from "../../api/index.ts";
import { notFound } from "../http-error.ts";
import { decodeCursor, pageOf } from "../paging.ts";
import { mappedPropertyIds } from "../screener-builder.ts";
import type { Handler } from "./handler-types.ts";

/** Deletes what it can; each id it cannot delete becomes one item of `errors` (spec 4.8). */
export const deleteProperties: Handler<"deleteProperties"> = ({ store }, { body }) => {
  const inUse = new Set<string>();
  for (const s of store.screeners.values()) for (const id of mappedPropertyIds(s)) inUse.add(id);
  const deleted: string[] = [];
  const errors: ValidationErrorItem[] = [];
  body.propertyIds.forEach((id, i) => {
    if (!store.properties.has(id)) {
      errors.push({ message: "Property not found", path: ["propertyIds", i] });
    } else if (inUse.has(id)) {
      errors.push({ message: "Property is mapped by a screener question", path: ["propertyIds", i] });
    } else {
      store.properties.delete(id);
      store.dropPropertyValues(id);
      deleted.push(id);
    }
  });
  return { deleted, errors };
};

export const listPropertyGroupProperties: Handler<"listPropertyGroupProperties"> = (
  { store },
  { params, query },
) => {
  if (!store.propertyGroups.has(params.propertyGroupId)) throw notFound("Property group");
  const cursorParam = SPEC_DEFAULTS.propertyGroupCursorParam;
  const offset = decodeCursor(query[cursorParam], [cursorParam]);
  const props = [...store.properties.values()].filter((p) => p.propertyGroupId === params.propertyGroupId);
  return pageOf(props, offset, query[SPEC_DEFAULTS.propertyGroupPageSizeParam], (p) => p);
};
