// Workflows of the Temporal cluster test (temporal-cluster.test.ts), bundled by it: one that ends by itself after
// a timer, one that waits for a signal (so it is in flight while a node is killed).
import { condition, defineSignal, setHandler, sleep } from '@temporalio/workflow';

export const releaseSignal = defineSignal<[string]>('release');

export async function clusterGreeting(name: string): Promise<string> {
  await sleep('1 second');
  return `hello ${name}`;
}

export async function clusterWaitForRelease(): Promise<string> {
  let releasedBy: string | undefined;
  setHandler(releaseSignal, (by) => void (releasedBy = by));
  await condition(() => releasedBy !== undefined);
  return `released by ${releasedBy}`;
}
