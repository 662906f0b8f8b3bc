import type { z } from "zod";
import type { Endpoints, OperationId } from "../../api/index.ts";
import type { TokenGrant } from "../auth.ts";
import type { EmulatorClock } from "../clock.ts";
import type { Store } from "../store/store.ts";
import type { PreSerialized } from "./pre-serialized.ts";

export interface HandlerContext {
  store: Store;
  clock: EmulatorClock;
  grant: TokenGrant;
}

export interface HandlerInput<K extends OperationId> {
  params: z.infer<Endpoints[K]["params"]>;
  query: z.infer<Endpoints[K]["query"]>;
  body: z.infer<Endpoints[K]["body"]>;
}

/**
 * One operation's behaviour: parsed input in, response body out (or an
 * EmulatorHttpError thrown). A PreSerialized body must hold the same JSON the
 * response schema describes; the contract tests parse it with the client.
 */
export type Handler<K extends OperationId> = (
  ctx: HandlerContext,
  input: HandlerInput<K>,
) => z.input<Endpoints[K]["response"]> | PreSerialized;

export type Handlers = { [K in OperationId]: Handler<K> };
