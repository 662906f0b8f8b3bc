/** A queued job's state as people say it, not as BullMQ names it: the CLI's --wait and the console show it. */
export function plainState(state: string): string {
  switch (state) {
    case "waiting":
    case "prioritized":
    case "waiting-children":
      return "waiting for a worker";
    case "delayed":
      return "waiting to be tried again";
    case "active":
      return "running";
    default:
      return state;
  }
}
