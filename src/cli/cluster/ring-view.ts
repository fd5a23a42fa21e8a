// What one node of the Temporal cluster sees of the ring: each time a service's membership changes, the node logs
// "Current reachable members" with the gRPC addresses of that service's members (ringpop's live view, unlike the
// cluster_membership table, whose rows stay 48 h after a node left). The last such line per service is the view.
import fs from 'node:fs';

export type RingService = 'frontend' | 'history' | 'matching' | 'worker';

/** The `host:port` addresses node's log last listed for `service`; undefined before its first such line. */
export function reachableMembers(logFile: string, service: RingService): string[] | undefined {
  let text: string;
  try {
    text = fs.readFileSync(logFile, 'utf8');
  } catch {
    return undefined;
  }
  let last: string[] | undefined;
  for (const line of text.split('\n')) {
    if (!line.includes('"Current reachable members"')) continue;
    try {
      const entry = JSON.parse(line) as { service?: string; addresses?: string[] };
      // An address may carry its state: `127.0.0.10:7235[draining=true]`.
      if (entry.service === service) last = (entry.addresses ?? []).map((a) => a.replace(/\[.*\]$/, ''));
    } catch {
      // not one of the server's JSON lines
    }
  }
  return last;
}
