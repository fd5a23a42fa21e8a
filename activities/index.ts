// Activities do all I/O. Built by a factory that receives their dependencies (samples-typescript style).
import type { DataSource } from 'typeorm';
import { createInviteActivities } from './invites';

export interface ActivityDeps {
  ds: DataSource;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createInviteActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
