// The griptape events an assistant run shows its clients: the model's streamed chunks, and the assistant's
// start and finish (whose task input and output are how clients read the question and the answer).
import type { CompletionDelta } from '../../drivers/model/types';
import type { Run } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import { griptapeId } from '../../ids';
import type { NewEvent } from '../code/runs/state';
import { textArtifact } from './prompt';

/** griptape event timestamps are epoch seconds. */
export const now = () => Date.now() / 1000;

/** A streamed piece of the model's answer: TextChunkEvent (text) or ActionChunkEvent (a function call). */
export function chunkEvent(delta: CompletionDelta): NewEvent {
  const payload =
    delta.kind === 'text'
      ? { type: 'TextChunkEvent', id: griptapeId(), timestamp: now(), meta: {}, index: 0, token: delta.text }
      : {
          type: 'ActionChunkEvent',
          id: griptapeId(),
          timestamp: now(),
          meta: {},
          index: delta.index,
          partial_input: delta.argumentsPart,
          tag: delta.id ?? null,
          name: delta.name ?? null,
          path: null,
        };
  return { type: payload.type, origin: 'ASSISTANT', payload };
}

/** The run went RUNNING at `startedAt`, and the assistant starts on the user's message. */
export function startEvents(run: Run, userMessage: string, startedAt: Date): NewEvent[] {
  return [
    { type: 'StructureRunRunning', origin: 'SYSTEM', payload: { status: 'RUNNING', started_at: iso(startedAt) } },
    {
      type: 'StartStructureRunEvent',
      origin: 'ASSISTANT',
      payload: {
        type: 'StartStructureRunEvent',
        id: griptapeId(),
        timestamp: now(),
        meta: {},
        structure_id: run.assistant_id,
        input_task_input: textArtifact(userMessage, griptapeId()),
        input_task_output: null,
      },
    },
  ];
}

/** The assistant finished: its `output_task_output` is the answer. */
export function finishEvent(run: Run, userMessage: string): NewEvent {
  return {
    type: 'FinishStructureRunEvent',
    origin: 'ASSISTANT',
    payload: {
      type: 'FinishStructureRunEvent',
      id: griptapeId(),
      timestamp: now(),
      meta: {},
      structure_id: run.assistant_id,
      output_task_input: textArtifact(userMessage, griptapeId()),
      output_task_output: run.output,
    },
  };
}
