// Chat messages as the api sees them: an exchange is a row of `runs` (kind `chat`) driven by its workflow
// (chat-run-<uuid>, workflows/chat-message.ts), which calls the model in the worker. The api validates the
// request, creates the row with the workflow, and then either streams the exchange's events or waits for
// its end; when the client goes away first, it cancels the exchange, which aborts the provider request.
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Caller } from '../caller';
import { badRequest, serviceUnavailable } from '../../errors';
import type { RunUpdatesHub } from '../../persistence/run-updates-hub';
import type { Config } from '../../config';
import type { RunEvent } from '../../persistence/entities';
import { newRunRow, Run } from '../../persistence/entities/run';
import { CHAT_DELTA_EVENT, ChatRequest, ChatRequestError, MediaUse, toCompletionRequest } from './chat-mapping';
import { checkMedia } from './media-check';
import { signalCancel } from '../code/runs/cancellation';
import { isTerminal } from '../code/runs/lifecycle';
import type { RunsDeps } from '../code/runs/begin';
import { workflowStart } from '../../temporal/contracts';
import { insertAndStart } from '../../jobs/create';
import { insertRow } from '../../persistence/direct-sql';

/** What an exchange's row keeps as `input`: the request as received, and whether the answer is streamed. */
export interface ChatRunInput {
  stream: boolean;
  request: ChatRequest;
}

/** The api waits this much longer than the exchange's time limit (the workflow's timer ends it first). */
const WAIT_MARGIN_MS = 30_000;

/** Validates the request (400 for what the mapping cannot carry or the model cannot take), creates the exchange and starts its workflow. */
export async function createChatMessage(
  deps: RunsDeps,
  caller: Caller,
  request: ChatRequest,
  stream: boolean,
): Promise<Run> {
  const media: MediaUse[] = [];
  try {
    toCompletionRequest(request, stream, media);
  } catch (err) {
    if (err instanceof ChatRequestError) throw badRequest(err.message, err.path);
    throw err;
  }
  await checkMedia(deps.config, request.driver_configuration.model, media);
  const runId = randomUUID();
  const now = new Date();
  const input: ChatRunInput = { stream, request };
  const run = newRunRow(
    {
      run_id: runId,
      kind: 'chat',
      organization_id: caller.organizationId,
      input,
      model: request.driver_configuration.model ?? null,
      created_by: caller.actor,
    },
    now,
  );
  await insertAndStart(deps.ds, deps.temporal, {
    taskQueue: deps.config.temporal.taskQueue,
    resource: {
      kind: 'chat-run',
      id: runId,
      organizationId: caller.organizationId,
      summary: `Chat message${stream ? ' (streamed)' : ''}`,
    },
    insert: (em) => insertRow(em, Run, run),
    oneStatement: true,
    undo: (em) => em.query(`DELETE FROM runs WHERE run_id = $1`, [runId]),
    start: workflowStart.chatMessage({
      runId,
      timeLimitSeconds: deps.config.chatMessageJob.timeLimitSeconds,
      heartbeatTimeoutSeconds: deps.config.runProcess.heartbeatTimeoutSeconds,
    }),
  });
  return run;
}

/** Cancels an exchange whose client went away or stopped waiting: its workflow aborts the provider request. */
export async function abandonChatMessage(
  deps: Pick<RunsDeps, 'temporal'>,
  caller: Caller,
  run: Run,
  why: string,
): Promise<void> {
  await signalCancel(deps.temporal, run, `${caller.actor} (${why})`);
}

/** Why a wait ended without the exchange's end: the client left, too long, or this api process is stopping. */
export type WaitInterrupted = 'client-gone' | 'timeout' | 'shutdown';

/**
 * Waits for the exchange to end: woken by the run's notifications (LISTEN/NOTIFY), re-checked every
 * SSE_RECHECK_MS in case one was missed. Resolves with the row, terminal, or with why it stopped waiting:
 * `signal` aborted, the time limit and a margin passed, or the api is shutting down.
 */
export async function waitForChatAnswer(
  deps: { ds: DataSource; config: Config; runUpdates?: RunUpdatesHub },
  runId: string,
  signal: AbortSignal,
): Promise<Run | WaitInterrupted> {
  const read = async () => {
    const run = await deps.ds.getRepository(Run).findOneByOrFail({ run_id: runId });
    return isTerminal(run.status) ? run : undefined;
  };
  return new Promise<Run | WaitInterrupted>((resolve, reject) => {
    let reading = false;
    let again = false;
    const done = (value: Run | WaitInterrupted, err?: unknown) => {
      clearInterval(recheck);
      clearTimeout(deadline);
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(value);
    };
    const check = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const run = await read();
          if (run) return done(run);
        } while (again);
      } catch (err) {
        done('timeout', err);
      } finally {
        reading = false;
      }
    };
    const onAbort = () => done('client-gone');
    const unsubscribe =
      deps.runUpdates?.subscribe(runId, { update: () => void check(), close: () => done('shutdown') }) ??
      (() => undefined);
    const recheck = setInterval(() => void check(), deps.config.sse.recheckMs);
    const deadline = setTimeout(
      () => done('timeout'),
      deps.config.chatMessageJob.timeLimitSeconds * 1000 + WAIT_MARGIN_MS,
    );
    signal.addEventListener('abort', onAbort, { once: true });
    void check();
  });
}

/** Failure reasons that are the caller's to fix (400); every other end of an exchange without an answer is a 503. */
const CALLER_FAULTS = ['ModelRequestRejected', 'InvalidChatRequest'];

/** The answer of an ended exchange: its griptape Message dict, or the error that says why there is none. */
export function chatAnswer(run: Run): unknown {
  if (run.status === 'SUCCEEDED' && run.output != null) return run.output;
  const detail = (run.status_detail ?? {}) as { reason?: string; error?: string; message?: string };
  const message = detail.error ?? detail.message ?? `The exchange ended ${run.status}`;
  if (detail.reason && CALLER_FAULTS.includes(detail.reason)) throw badRequest(message);
  throw serviceUnavailable(run.status === 'CANCELLED' ? `The chat message was cancelled: ${message}` : message);
}

/** The SSE frame of one event of a streamed exchange: DeltaMessage dicts as they are; an unsuccessful end as `{error}`. */
export function chatFrame(e: RunEvent): string {
  if (e.type === CHAT_DELTA_EVENT) return `data: ${JSON.stringify(e.payload)}\n\n`;
  if (e.type === 'StructureRunError') {
    const detail = (e.payload as { status_detail?: { error?: string } }).status_detail;
    return `data: ${JSON.stringify({ error: detail?.error ?? 'The chat message failed' })}\n\n`;
  }
  if (e.type === 'StructureRunCancelled') {
    const detail = (e.payload as { status_detail?: { message?: string } }).status_detail;
    return `data: ${JSON.stringify({ error: `The chat message was cancelled: ${detail?.message ?? 'no detail'}` })}\n\n`;
  }
  return '';
}
