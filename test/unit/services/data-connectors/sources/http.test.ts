// Retry-After as the data connector sources read it (src/services/data-connectors/sources/http.ts).
import { expect } from 'chai';
import { retryAfterSeconds } from '../../../../../src/services/data-connectors/sources/http';
import { safeSegment } from '../../../../../src/services/data-connectors/sources/source-error';

describe('data connector sources: Retry-After and path segments', () => {
  it('reads delta-seconds and HTTP dates, and 1 s when absent or unreadable', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('120', now)).to.equal(120);
    expect(retryAfterSeconds(' 0 ', now)).to.equal(0);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:30 GMT', now)).to.equal(30);
    expect(retryAfterSeconds('Wed, 31 Dec 2025 23:00:00 GMT', now)).to.equal(0);
    for (const bad of [null, '', 'soon', '-5', '1.5']) expect(retryAfterSeconds(bad, now), String(bad)).to.equal(1);
  });

  it('makes outside names into one safe path segment', () => {
    expect(safeSegment('Q1/Q2 report', 'x')).to.equal('Q1_Q2 report');
    expect(safeSegment('..', 'x')).to.equal('x');
    expect(safeSegment('a\\b\u0000c', 'x')).to.equal('a_b_c');
    expect(safeSegment('   ', 'x')).to.equal('x');
    expect(safeSegment('n'.repeat(300), 'x')).to.have.length(150);
  });
});
