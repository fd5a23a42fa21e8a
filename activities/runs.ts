import type { ActivityDeps } from '.';

/** Run activities: status transitions, the user process, logs and events. (Being implemented.) */
export function createRunActivities(_deps: ActivityDeps) {
  return {};
}
