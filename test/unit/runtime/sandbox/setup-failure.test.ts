// Which exits are the sandbox's own setup failing (a run then ends ERROR SandboxSetupFailed, not FAILED with the
// exit code): 125 with the launcher's or the cgroup entry's `tarmac:` line, 1 with bubblewrap's `bwrap:` line.
import { expect } from 'chai';
import { sandboxSetupFailure } from '../../../../src/runtime/sandbox/setup-failure';

describe('sandboxSetupFailure', () => {
  it("names the step's reason for 125 with a tarmac: line, and bubblewrap's message for 1 with a bwrap: line", () => {
    expect(sandboxSetupFailure(125, "tarmac: the sandbox's network could not be set up: pasta did not start")).to.equal(
      "the sandbox's network could not be set up: pasta did not start",
    );
    expect(sandboxSetupFailure(125, 'tarmac: cannot enter the control group /sys/fs/cgroup/x')).to.equal(
      'cannot enter the control group /sys/fs/cgroup/x',
    );
    expect(sandboxSetupFailure(1, 'bwrap: loopback: Failed RTM_NEWADDR: File exists')).to.equal(
      'bwrap: loopback: Failed RTM_NEWADDR: File exists',
    );
  });

  it("leaves the program's own exits alone", () => {
    expect(sandboxSetupFailure(125, 'Traceback (most recent call last):')).to.equal(undefined);
    expect(sandboxSetupFailure(125, undefined)).to.equal(undefined);
    expect(sandboxSetupFailure(1, "tarmac: the sandbox's network could not be set up: x")).to.equal(undefined);
    expect(sandboxSetupFailure(2, 'bwrap: something')).to.equal(undefined);
    expect(sandboxSetupFailure(null, 'tarmac: x')).to.equal(undefined);
  });
});
