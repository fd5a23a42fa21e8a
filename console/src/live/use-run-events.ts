// A run's events, live: the api's SSE stream read with fetch (an EventSource cannot send the API key), resumed
// with Last-Event-ID after a drop, and, when the stream keeps failing, the event list polled instead.
import { useEffect, useState } from 'react';
import { isTerminal, listEvents, openEventStream, type RunEvent, type RunKind } from '../api/runs';
import { frames } from './sse-frames';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'polling' | 'ended';

const STREAM_ATTEMPTS_BEFORE_POLLING = 3;
const RETRY_MS = 1000;
const POLL_MS = 2000;

export function useRunEvents(kind: RunKind, runId: string, enabled: boolean, onEvent?: (e: RunEvent) => void) {
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const [endStatus, setEndStatus] = useState<string | undefined>();

  useEffect(() => {
    if (!enabled) return;
    const abort = new AbortController();
    const seen: RunEvent[] = [];
    let lastEventId: string | undefined;
    const add = (e: RunEvent) => {
      seen.push(e);
      setEvents([...seen]);
      onEvent?.(e);
    };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    async function follow() {
      let failures = 0;
      while (!abort.signal.aborted && failures < STREAM_ATTEMPTS_BEFORE_POLLING) {
        try {
          const body = await openEventStream(kind, runId, lastEventId, abort.signal);
          setState('live');
          for await (const frame of frames(body)) {
            failures = 0;
            if (frame.event === 'end') {
              setEndStatus((JSON.parse(frame.data) as { status: string }).status);
              setState('ended');
              return;
            }
            if (frame.id) lastEventId = frame.id;
            add(JSON.parse(frame.data) as RunEvent);
          }
        } catch {
          if (abort.signal.aborted) return;
        }
        failures++;
        setState('reconnecting');
        await sleep(RETRY_MS);
      }
      // The stream keeps failing (a proxy that buffers, a flaky network): poll the list until the run ends.
      setState('polling');
      while (!abort.signal.aborted) {
        try {
          for (const e of await listEvents(kind, runId, seen.length)) add(e);
          const last = seen[seen.length - 1];
          if (last && last.origin === 'SYSTEM' && isTerminalEvent(last.type)) {
            setState('ended');
            return;
          }
        } catch {
          // Tried again at the next tick.
        }
        await sleep(POLL_MS);
      }
    }
    void follow();
    return () => abort.abort();
    // onEvent is read at each event, not a reason to reconnect.
  }, [kind, runId, enabled]);

  return { events, state, endStatus };
}

const isTerminalEvent = (type: string) =>
  ['StructureRunCompleted', 'StructureRunError', 'StructureRunCancelled'].includes(type) || isTerminal(type);
