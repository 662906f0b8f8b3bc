/** Redis keys of the alerts, all under the configured prefix (one hash slot with a `{tag}` prefix). */
export function alertKeys(prefix: string) {
  return {
    /** rule|subject → the state as last decided (AlertState JSON). */
    state: `${prefix}:alerts:state`,
    /** event id → an AlertEvent decided and not yet handed to the alerts queue. */
    outbox: `${prefix}:alerts:outbox`,
    /** Held by the one process evaluating the rules now. */
    evaluating: `${prefix}:alerts:evaluating`,
    /** What the rules remember between evaluations: when a schedule was first seen, since when the budget is paused. */
    memory: `${prefix}:alerts:memory`,
    /** The latest loss of Redis's data noticed (JSON {at, epoch}). */
    dataLost: `${prefix}:alerts:data-lost`,
  };
}
export type AlertKeys = ReturnType<typeof alertKeys>;
