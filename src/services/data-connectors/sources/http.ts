// HTTP for the sources that talk to a provider's REST API (drive, wiki): 429 (and 503) answers with Retry-After
// are waited out and retried, within bounds, so a rate-limited provider slows a job down instead of failing it;
// bodies are read up to a cap and no further.
import { SourceError, tooLarge } from './source-error';

export interface RetryPolicy {
  /** Retries after a 429/503 (so attempts = retries + 1). */
  retries: number;
  /** A Retry-After longer than this is not waited for: the answer is returned as it is. */
  maxWaitSeconds: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, maxWaitSeconds: 60 };

/** Seconds of a Retry-After header (delta-seconds or an HTTP date); 1 when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number {
  if (header === null || header.trim() === '') return 1;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  // An HTTP date names its day and month; Date.parse alone would also take `-5` or `2026`.
  const at = /^[A-Za-z]{3}, /.test(trimmed) ? Date.parse(trimmed) : NaN;
  return Number.isNaN(at) ? 1 : Math.max(0, Math.ceil((at - now) / 1000));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `fetch` that waits out 429 and 503 answers carrying Retry-After (at most `policy.retries` times, each wait at
 * most `policy.maxWaitSeconds`) and returns the last answer otherwise. `init` is rebuilt per attempt; redirects
 * are followed unless it says otherwise.
 */
export async function fetchWithRetry(
  url: string,
  init: () => RequestInit,
  signal: AbortSignal,
  policy: RetryPolicy = DEFAULT_RETRY,
  onWait?: (seconds: number) => void,
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, { redirect: 'follow', ...init(), signal });
    const limited = res.status === 429 || (res.status === 503 && res.headers.has('retry-after'));
    if (!limited || attempt >= policy.retries) return res;
    const wait = retryAfterSeconds(res.headers.get('retry-after'));
    if (wait > policy.maxWaitSeconds) return res;
    await res.body?.cancel();
    onWait?.(wait);
    await sleep(wait * 1000, signal);
  }
}

/** The error of a provider answer that was still rate limited after the retries. */
export const rateLimited = (res: Response, what: string) =>
  new SourceError(
    'RateLimited',
    `${what}: the provider is still rate limiting (HTTP ${res.status}, Retry-After ${res.headers.get('retry-after') ?? 'absent'})`,
  );

/** The body of `res`, at most `maxBytes`: a larger one (declared or streamed) is a TooLarge error, read no further. */
export async function readCapped(res: Response, maxBytes: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw tooLarge(what, maxBytes);
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(what, maxBytes);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks, size);
}

/** A provider's JSON answer, read up to a generous cap (listings are small; a huge one is an error, not OOM). */
export async function readJson<T>(res: Response, what: string): Promise<T> {
  const body = await readCapped(res, 32 * 1024 * 1024, what);
  try {
    return JSON.parse(body.toString('utf8')) as T;
  } catch {
    throw new SourceError(
      'FetchFailed',
      `${what}: the provider answered HTTP ${res.status} with a body that is not JSON`,
    );
  }
}
