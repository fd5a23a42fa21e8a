// An assistant run as the worker reads it (the run row and its assistant_runs row) and its transcript: the
// model's turns and the results of its function calls, in order. Each entry is written once per step and
// role (and tool call), so a retried activity never repeats one.
import type { DataSource, EntityManager } from 'typeorm';
import { AssistantRun, type TranscriptEntry } from '../../persistence/entities/assistant';
import { Run } from '../../persistence/entities/run';
import { userMessageOf } from './prompt';
import type { AssistantRunRecord } from './runs';

export async function loadAssistantRun(
  ds: DataSource | EntityManager,
  runId: string,
): Promise<AssistantRunRecord | undefined> {
  const run = await ds.getRepository(Run).findOneBy({ run_id: runId, kind: 'assistant' });
  const details = await ds.getRepository(AssistantRun).findOneBy({ run_id: runId });
  return run && details ? { run, details } : undefined;
}

/** What the user said to the assistant in this run (its input, else its args). */
export const userMessageOfRun = (run: Run) => userMessageOf(typeof run.input === 'string' ? run.input : null, run.args);

/** The function call `toolCallId` the model made in step `step`, if it did. */
export function toolCallOf(details: AssistantRun, step: number, toolCallId: string) {
  const turn = details.transcript.find((t) => t.step === step && t.role === 'assistant');
  return turn?.role === 'assistant' ? turn.toolCalls?.find((c) => c.id === toolCallId) : undefined;
}

/** Adds an entry to the transcript unless one for the same step and role (and tool call) is there already. */
export async function appendTranscript(em: EntityManager, runId: string, entry: TranscriptEntry): Promise<boolean> {
  const [row]: Array<{ transcript: TranscriptEntry[] }> = await em.query(
    `SELECT transcript FROM assistant_runs WHERE run_id = $1 FOR UPDATE`,
    [runId],
  );
  const exists = row.transcript.some(
    (t) =>
      t.step === entry.step &&
      t.role === entry.role &&
      (entry.role !== 'tool' || (t.role === 'tool' && t.toolCallId === entry.toolCallId)),
  );
  if (exists) return false;
  await em.query(`UPDATE assistant_runs SET transcript = transcript || $2::jsonb WHERE run_id = $1`, [
    runId,
    JSON.stringify([entry]),
  ]);
  return true;
}
