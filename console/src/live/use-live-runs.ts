// The organization's run changes, live (GET /api/runs/stream, read with fetch: an EventSource cannot send the API
// key), applied to every cached list of runs (the keys of `queryKeys.runs`, console/src/api/query-keys.ts): a
// listed run's row changes in place; a list the run now enters or leaves (a new run, a status filter) is read
// again. The stream resumes with Last-Event-ID after a drop; while it is down the lists poll as before (`live` is
// false).
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { Schemas } from '../api/client';
import { queryKeys } from '../api/query-keys';
import { openRunChanges } from '../api/runs';
import { frames } from './sse-frames';

type RunSummary = Schemas['RunSummary'];
type RunList = Schemas['RunList'];
/** The filters of a cached list (the second element of its query key). */
interface ListSearch {
  kind?: string;
  status?: string;
  resource_id?: string;
  created_by?: string;
}

const RETRY_MS = 1000;
const MAX_RETRY_MS = 15_000;
/** Changes that come together (a burst of runs) re-read a list once. */
const REFRESH_DEBOUNCE_MS = 250;

/** Could `run` be in the list filtered by `search` (a listed run may leave it; another may enter)? */
const matches = (search: ListSearch, run: RunSummary) =>
  (!search.kind || search.kind === run.kind) &&
  (!search.status || search.status === run.status) &&
  (!search.resource_id || search.resource_id === run.resource_id || search.resource_id === run.assistant_id) &&
  (!search.created_by || search.created_by === run.created_by);

/** Applies one change to the cached lists; answers the lists to read again. */
function apply(queries: QueryClient, run: RunSummary): unknown[][] {
  const stale: unknown[][] = [];
  for (const [key, list] of queries.getQueriesData<RunList>({ queryKey: queryKeys.runs.all })) {
    if (!list) continue;
    const search = (key[1] ?? {}) as ListSearch;
    const listed = list.runs.some((r) => r.run_id === run.run_id);
    if (listed && matches(search, run))
      queries.setQueryData<RunList>(key, {
        ...list,
        runs: list.runs.map((r) => (r.run_id === run.run_id ? run : r)),
      });
    else if (listed || matches(search, run)) stale.push([...key]);
  }
  return stale;
}

export function useLiveRuns(): { live: boolean } {
  const queries = useQueryClient();
  const [live, setLive] = useState(false);

  useEffect(() => {
    const abort = new AbortController();
    let lastEventId: string | undefined;
    const stale = new Map<string, unknown[]>();
    let refresh: ReturnType<typeof setTimeout> | undefined;
    const refreshSoon = (keys: unknown[][]) => {
      for (const key of keys) stale.set(JSON.stringify(key), key);
      if (!stale.size || refresh) return;
      refresh = setTimeout(() => {
        refresh = undefined;
        for (const key of stale.values()) void queries.invalidateQueries({ queryKey: key, exact: true });
        stale.clear();
      }, REFRESH_DEBOUNCE_MS);
    };

    async function follow() {
      let delay = RETRY_MS;
      while (!abort.signal.aborted) {
        try {
          const stream = await openRunChanges(lastEventId, abort.signal);
          // A first stream sends the changes of the last seconds first (those since the lists were read); a
          // resumed one those since the last change seen.
          setLive(true);
          delay = RETRY_MS;
          for await (const frame of frames(stream)) {
            if (frame.id) lastEventId = frame.id;
            refreshSoon(apply(queries, JSON.parse(frame.data) as RunSummary));
          }
        } catch {
          if (abort.signal.aborted) return;
        }
        // Dropped: the lists poll until the stream is back, which resumes after the last change seen.
        setLive(false);
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, MAX_RETRY_MS);
      }
    }
    void follow();
    return () => {
      abort.abort();
      clearTimeout(refresh);
    };
  }, [queries]);

  return { live };
}
