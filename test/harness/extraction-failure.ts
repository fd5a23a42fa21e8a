// The ExtractionError a document reader's promise rejects with (a test fails if it resolves, or rejects with
// anything else): for the unit tests of src/services/knowledge's readers.
import { expect } from 'chai';
import { ExtractionError } from '../../src/services/knowledge/documents/extraction-error';

export async function extractionFailure(run: () => Promise<unknown>): Promise<ExtractionError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(ExtractionError);
  return err as ExtractionError;
}
