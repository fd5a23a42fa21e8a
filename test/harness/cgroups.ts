// Measurements of runs' control groups from the host (tests and drills): what the kernel counted, not what
// the program said.
import fs from 'node:fs';
import path from 'node:path';
import { Organization } from '../../src/persistence/entities/organization';
import { CgroupTree } from '../../src/runtime/sandbox/cgroups';
import { getStack } from './stack';

/**
 * Watches the run groups of an organization (every `everyMs`) and keeps the highest peak memory of any one
 * of them: a run's group is removed when it ends, so its peak is read while it lives.
 */
export async function watchRunMemory(organizationId: string, everyMs = 100): Promise<{ stop(): number }> {
  const { ds, config } = getStack();
  const org = await ds.getRepository(Organization).findOneByOrFail({ organization_id: organizationId });
  // Opening the tree from the test process (already the platform's) only finds it.
  const { memory } = CgroupTree.open({ platformWeight: config.sandbox.platformCpuWeight });
  const dir = memory.organizationDir(config.sandbox.gidBase + org.sandbox_index);
  let highest = 0;
  const sample = () => {
    let runs: string[] = [];
    try {
      runs = fs.readdirSync(dir).filter((d) => d.startsWith('run-'));
    } catch {
      return; // no run of it now
    }
    for (const run of runs) {
      try {
        highest = Math.max(highest, Number(fs.readFileSync(path.join(dir, run, memory.peakFile), 'utf8')));
      } catch {
        // ended meanwhile
      }
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return highest;
    },
  };
}

/** Four processes that each try to hold `mib` MiB (touched, so it is really used) for a few seconds. */
export const memoryHogs = (mib: number) => `import os, time
pids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        b = bytearray(${mib} * 1024 * 1024)
        time.sleep(3)
        os._exit(0)
    pids.append(pid)
killed = sum(1 for p in pids if os.waitpid(p, 0)[1] != 0)
print("%d of 4 killed" % killed)
raise SystemExit(1 if killed else 0)
`;
