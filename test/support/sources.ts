// Helpers for tests that call a data connector source's factory directly (test/unit/services/data-connectors/sources/*.test.ts).
import type {
  ConnectorSource,
  SourceContext,
  SourceItem,
  SourceItemError,
} from '../../src/services/data-connectors/sources/source';
import { isItemError } from '../../src/services/data-connectors/sources/source';

export function sourceContext(overrides: Partial<SourceContext> = {}): SourceContext & { notes: string[] } {
  const notes: string[] = [];
  return {
    signal: new AbortController().signal,
    maxItemBytes: 1024 * 1024,
    progress: (n) => notes.push(n),
    notes,
    ...overrides,
  };
}

/** Everything `list()` yields, split into items and item errors. */
export async function listAll(source: ConnectorSource, ctx: SourceContext = sourceContext()) {
  const items: SourceItem[] = [];
  const errors: SourceItemError[] = [];
  for await (const x of source.list(ctx)) (isItemError(x) ? errors : items).push(x as never);
  return { items, errors };
}

/** The rejection of `p` (fails the test when it resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<Error & { type?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { type?: string };
  }
  throw new Error('expected a rejection');
}
