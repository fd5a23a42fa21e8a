// The schedules of a resource being deleted go with it: Temporal side first, then the rows (a fire that comes
// in between finds the resource gone and removes its schedule itself: src/services/schedules/fire.ts).
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { RunSchedule } from '../../persistence/entities/run-schedule';
import { deleteRunSchedule } from '../../temporal/run-schedules';

export async function deleteSchedulesOf(deps: { ds: DataSource; temporal: Client }, resourceId: string): Promise<void> {
  const schedules = await deps.ds
    .getRepository(RunSchedule)
    .find({ where: { resource_id: resourceId }, select: { schedule_id: true } });
  for (const s of schedules) await deleteRunSchedule(deps.temporal, s.schedule_id);
  if (schedules.length) await deps.ds.getRepository(RunSchedule).delete({ resource_id: resourceId });
}
