// A few items' work at a time, the one pool of the data plane: the data job writes the items its source lists
// DATA_CONNECTOR_FETCH_CONCURRENCY at a time (ingest.ts), the webscraper fetches the pages of one depth so
// (sources/webscraper.ts). The pool refills as each work ends, not only when the consumer takes a result, so
// the work goes on while the consumer is busy; items are taken from their source only while a slot is free
// and fewer than `waitingAtMost` results wait to be taken, so a slow consumer slows the work instead of
// piling results up. However the iteration ends (the source or a work fails, the consumer stops taking
// results), nothing is started after it, and it returns only once every started work has ended.

/**
 * `work` of each of `items`, at most `limit` at a time; the results as each work ends (in no fixed order).
 * The first failure (of the source or of a work) is thrown once the started works have ended.
 */
export async function* mapConcurrently<T, R>(
  items: Iterable<T> | AsyncIterable<T>,
  limit: number,
  work: (item: T) => Promise<R>,
  waitingAtMost = limit,
): AsyncGenerator<R> {
  const source =
    Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : (items as Iterable<T>)[Symbol.iterator]();
  const running = new Set<Promise<void>>();
  const results: R[] = [];
  let failure: { error: unknown } | undefined;
  let listed = false;
  let stopped = false;
  let filling = false;
  let taking: Promise<void> = Promise.resolve();
  let changed = () => {};

  const room = () => !stopped && !listed && !failure && running.size < limit && results.length < waitingAtMost;
  const start = (item: T) => {
    const started: Promise<void> = work(item).then(
      (result) => void results.push(result),
      (error: unknown) => void (failure ??= { error }),
    );
    running.add(started);
    void started.finally(() => {
      running.delete(started);
      fill();
      changed();
    });
  };
  /** Takes items while there is room, one taker at a time (an async source is asked for one item at a time). */
  const fill = () => {
    if (filling || !room()) return;
    filling = true;
    taking = (async () => {
      try {
        while (room()) {
          const next = await source.next();
          if (next.done) listed = true;
          else if (!stopped && !failure) start(next.value);
        }
      } catch (error) {
        failure ??= { error };
      } finally {
        filling = false;
        changed();
      }
    })();
  };

  try {
    for (;;) {
      fill();
      if (failure) throw failure.error;
      if (results.length) yield results.shift()!;
      else if (listed && !running.size && !filling) return;
      else await new Promise<void>((resolve) => (changed = resolve));
    }
  } finally {
    stopped = true;
    await taking;
    await Promise.allSettled(running);
    if (!listed) await source.return?.();
  }
}

/** `work` of each of `items`, at most `limit` at a time, until all have ended or one failed (then its error). */
export async function forEachConcurrently<T>(
  items: Iterable<T> | AsyncIterable<T>,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const ending = mapConcurrently(items, limit, work);
  while (!(await ending.next()).done);
}
