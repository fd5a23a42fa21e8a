// An SSE client that does what a careful client does: a stream that closes without its end comment
// (`: end <STATUS>`) did not end, its api went away; it reconnects (to the next api in its list, or the same one)
// with `Last-Event-ID` = the id of the last frame it got, until the end comment has come.
import { sseBlocks } from '../harness/sse';
import { sleep } from './kit';

const FINAL_EVENTS = ['StructureRunCompleted', 'StructureRunError', 'StructureRunCancelled'];

export interface Followed {
  frames: Array<{ id: number; data: any }>;
  /** Connections after the first one. */
  reconnects: number;
  /** Why each earlier connection ended. */
  breaks: string[];
  /** The end comment came (and the stream closed after it). */
  done: boolean;
  /** The final status the end comment named. */
  status?: string;
  /** Something broke the end comment's promise: no final event before it, frames after it. */
  endViolations: string[];
}

export async function followStream(
  baseUrls: () => string[],
  runId: string,
  key: string,
  opts: { maxConnections?: number; deadline: number; onFrame?: () => void },
): Promise<Followed> {
  const out: Followed = { frames: [], reconnects: 0, breaks: [], done: false, endViolations: [] };
  const maxConnections = opts.maxConnections ?? 50;
  for (let attempt = 0; attempt < maxConnections && Date.now() < opts.deadline; attempt++) {
    const urls = baseUrls();
    const base = urls[Math.min(attempt, urls.length - 1)];
    if (attempt > 0) out.reconnects++;
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    const last = out.frames[out.frames.length - 1];
    if (last) headers['last-event-id'] = String(last.id);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(0, opts.deadline - Date.now()));
    try {
      const res = await fetch(`${base}/api/structure-runs/${runId}/events/stream`, { headers, signal: abort.signal });
      if (res.status !== 200 || !res.body) {
        out.breaks.push(`HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
        await sleep(200);
        continue;
      }
      let end: string | undefined;
      for await (const block of sseBlocks(res.body)) {
        if ('comments' in block) continue;
        if ('end' in block) {
          end = block.end;
          continue;
        }
        if ('endEvent' in block) {
          out.endViolations.push('an end frame that was not asked for');
          continue;
        }
        if (end !== undefined) out.endViolations.push(`a frame (id ${block.id}) after the end comment`);
        out.frames.push(block);
        opts.onFrame?.();
      }
      if (end !== undefined) {
        const final = out.frames[out.frames.length - 1]?.data;
        if (!FINAL_EVENTS.includes(final?.type))
          out.endViolations.push(`the end comment (${end}) came after ${final?.type}, not a final event`);
        else if (final.payload?.status !== undefined && final.payload.status !== end)
          out.endViolations.push(`the end comment says ${end}, the final event ${final.payload.status}`);
        out.status = end;
        out.done = true;
        return out;
      }
      out.breaks.push('closed without the end comment');
    } catch (err) {
      out.breaks.push(String((err as Error).cause ?? (err as Error).message));
      await sleep(100);
    } finally {
      clearTimeout(timer);
    }
  }
  return out;
}

/** Compares what a client got with the run's events in the database: answers [missing, repeated, misordered]. */
export function compareFrames(
  frames: Followed['frames'],
  stored: Array<{ seq: number; event_id: string }>,
): [number, number, number] {
  const ids = frames.map((fr) => fr.id);
  const missing = stored.filter((e) => !ids.includes(e.seq)).length;
  const repeated = ids.length - new Set(ids).size;
  const misordered = ids.some((id, i) => i > 0 && id <= ids[i - 1]) ? 1 : 0;
  // The frame carries the stored event, not a look-alike.
  const wrong = frames.filter((fr) => stored.find((e) => e.seq === fr.id)?.event_id !== fr.data.event_id).length;
  return [missing, repeated, misordered + wrong];
}
