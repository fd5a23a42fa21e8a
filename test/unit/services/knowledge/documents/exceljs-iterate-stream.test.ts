// The replacement of exceljs's stream helper (src/services/knowledge/documents/exceljs-iterate-stream.ts): once
// xlsx.ts is loaded, the helper exceljs's streaming reader requires is ours (were exceljs to move or rename it, or load it
// another way, this fails), and loading exceljs before the fix is an error at load rather than a reader that
// silently keeps the faulty helper.
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import {
  iterateStream,
  iterateStreamReplaced,
} from '../../../../../src/services/knowledge/documents/exceljs-iterate-stream';
import '../../../../../src/services/knowledge/documents/xlsx';

const fix = require.resolve('../../../../../src/services/knowledge/documents/exceljs-iterate-stream');

describe("exceljs's stream helper", () => {
  it('is replaced by ours for the streaming workbook reader', () => {
    expect(iterateStreamReplaced()).to.equal(true);
    expect(require('exceljs/lib/utils/iterate-stream.js')).to.equal(iterateStream);
  });

  it('refuses to load after exceljs', () => {
    const late = spawnSync(process.execPath, ['-e', `require('exceljs'); require(${JSON.stringify(fix)})`], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(late.status).to.not.equal(0);
    expect(late.stderr).to.include('exceljs was loaded before');
    const early = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(fix)}); require('exceljs')`], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(early.status, early.stderr).to.equal(0);
  });
});
