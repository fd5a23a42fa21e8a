// Histories as JSON files: protobuf.js's plain object of the History message (int64 and enums as strings,
// bytes in base64). Not the JSON of `temporal workflow show -o json`: the SDK's historyToJSON/historyFromJSON
// fail in this install ("type must be a Type": @temporalio/common and @temporalio/proto each carry their own
// protobufjs, and its type check does not recognise the other's types); History.fromObject does not need it.
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.History;
const { History } = temporal.api.history.v1;

/** The source folder of the recorded histories (this file runs from dist/test/workflows/histories). */
export const HISTORIES_DIR = path.resolve(__dirname, '../../../../test/workflows/histories');

export async function saveHistory(handle: WorkflowHandle, file: string): Promise<void> {
  const history = History.fromObject(await handle.fetchHistory());
  const plain = History.toObject(history, { longs: String, enums: String, bytes: String });
  fs.writeFileSync(path.join(HISTORIES_DIR, file), `${JSON.stringify(plain, null, 1)}\n`);
}

export function loadHistory(file: string): History {
  return History.fromObject(JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8')));
}
