// The quick drills in `npm test` (test/drills/index.ts has their sizes; `npm run drill` runs all at full
// size). Each injects its fault into the real stack and must find nothing lost, nothing duplicated and no
// other broken promise; the assertions also check that the fault really happened.
import { expect } from 'chai';
import { DRILLS } from './index';
import type { DrillReport } from './kit';
import { summaryTable } from './summary';

const quick = (name: string) => DRILLS.find((d) => d.name === name)!.quick!();

function expectClean(r: DrillReport) {
  expect(r.violations, r.violations.join('\n')).to.deep.equal([]);
  expect(r.lost, 'records lost').to.equal(0);
  expect(r.duplicated, 'records duplicated').to.equal(0);
  expect(r.faults).to.be.greaterThan(0);
}

describe('resilience drills (quick)', function () {
  // Generous: a drill's own deadlines decide its verdict; this only stops one that hangs.
  this.timeout(360_000);
  const reports: DrillReport[] = [];
  after(() => {
    if (reports.length)
      console.log(
        `\n${summaryTable(reports)
          .split('\n')
          .map((l) => `      ${l}`)
          .join('\n')}\n`,
      );
  });

  it('bad-input: every route answers bad input with a 4xx {type, errors} and writes nothing', async () => {
    const r = await quick('bad-input');
    reports.push(r);
    expectClean(r);
    expect(r.checked).to.be.greaterThan(500);
    for (const status of ['400', '401', '404', '413', '415'])
      expect(r.facts[`status ${status}`], status).to.be.greaterThan(0);
    expect(r.facts.archives).to.equal(5);
  });

  it('admission: every run-control promise holds under concurrent repeats, bursts over limits and a worker SIGKILL', async function () {
    // One check per run-control promise, some with their own processes and a worker kill: more than one drill's time.
    this.timeout(480_000);
    const r = await quick('admission');
    reports.push(r);
    expectClean(r);
    expect(r.facts.broken ?? 0).to.equal(0);
    expect(r.facts.held).to.be.at.least(1);
  });

  it('waitpoints: runs waiting for approval outlive a worker kill and a Temporal restart, holding no slot; each call runs once', async () => {
    const r = await quick('waitpoints');
    reports.push(r);
    expectClean(r);
    expect(r.faults).to.equal(2);
    expect(r.facts.slotsHeldWhileWaiting).to.equal(0);
    expect(r.facts.runs).to.equal(10);
  });

  it('api-kill: SSE clients of a killed api resume on another with no event missing or repeated', async () => {
    const r = await quick('api-kill');
    reports.push(r);
    expectClean(r);
    expect(r.facts.streams).to.equal(100);
    expect(r.facts.reconnects).to.be.at.least(100);
  });

  it("hostile-tenant: every attack of a tenant's structure is blocked; the other tenant and the platform are untouched", async () => {
    const r = await quick('hostile-tenant');
    reports.push(r);
    expectClean(r);
    expect(r.facts.escapes ?? 0).to.equal(0);
    expect(r.facts.blocked).to.be.at.least(30);
  });

  it("hostile-tenant-rootless: the api and worker as an ordinary user (the rootless mode) block every attack but the mode's known limits", async () => {
    const r = await quick('hostile-tenant-rootless');
    reports.push(r);
    expectClean(r);
    expect(r.facts.escapes ?? 0).to.equal(0);
    expect(r.facts.blocked).to.be.at.least(30);
  });

  it('hostile-machine: every limit holds against a tenant trying to take memory, processes, disk, files or the network', async () => {
    const r = await quick('hostile-machine');
    reports.push(r);
    expectClean(r);
    expect(r.facts.broken ?? 0).to.equal(0);
    expect(r.facts.held).to.be.at.least(15);
  });

  it('worker-kill: runs in flight on a killed worker end WorkerLost, the others succeed, none runs twice', async () => {
    const r = await quick('worker-kill');
    reports.push(r);
    expectClean(r);
    expect(r.facts.workerLost).to.equal(10);
    expect(r.facts.runs).to.equal(15);
  });

  it('upgrade: a rolling upgrade to a build whose workflows changed, with work in flight: 0 nondeterminism errors, each workflow on its build', async function () {
    this.timeout(480_000);
    const r = await quick('upgrade');
    reports.push(r);
    expectClean(r);
    expect(r.facts['items in flight on A at the promotion']).to.be.greaterThan(0);
  });

  it('cluster: the production shape loses nothing to a Temporal node, an api and a worker killed, a worker cut from PostgreSQL, a PostgreSQL restart', async function () {
    this.timeout(600_000);
    const r = await quick('cluster');
    reports.push(r);
    expectClean(r);
    // The cut of a worker from PostgreSQL needs root (the drill notes its absence otherwise).
    expect(r.faults).to.equal(process.getuid?.() === 0 ? 5 : 4);
    expect(r.facts['stream reconnects after the api kill']).to.be.greaterThan(0);
    expect(r.facts['workflows listed in visibility']).to.equal(r.facts.runs + r.facts['function runs']);
  });

  it('overload: work of every kind past the worker slots ends as it should, none for a platform reason; the share holds', async function () {
    this.timeout(600_000);
    const r = await quick('overload');
    reports.push(r);
    expectClean(r);
    expect(r.checked).to.equal(42);
    expect(r.facts['most executing per organization']).to.be.at.most(2);
    expect(r.facts['most waiting per organization']).to.be.greaterThan(0);
  });
});
