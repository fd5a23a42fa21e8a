import type { ActivityDeps } from '.';

/** Deployment activities: fetch source, read config, build. (Being implemented.) */
export function createDeploymentActivities(_deps: ActivityDeps) {
  return {};
}
