// Why an asset's text could not be read; the job records `type` and the message as an entry of its `errors`
// (ExtractionLimitExceeded: the extraction's thread hit its memory or time limit, extract-isolated.ts). Also
// the bounds every extractor keeps, so that no asset under the size cap can take the worker's memory.
export class ExtractionError extends Error {
  constructor(
    readonly type: 'UnsupportedFormat' | 'InvalidContent' | 'TooLarge' | 'ExtractionLimitExceeded',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Characters of text an asset may yield: chunking holds the text and its words in memory (about 30 bytes a
 * character at the peak) and takes about 5 s a million characters on a busy core, so a spreadsheet or a
 * compressed document whose text is far larger than its bytes stops here (TooLarge) instead.
 */
export const MAX_TEXT_CHARS = 10_000_000;

/** Bytes the XML parts of a zipped document (docx, pptx, epub) may inflate to: a zip bomb stops here. */
export const MAX_UNZIPPED_BYTES = 200 * 1024 * 1024;

/**
 * Bytes of XML a spreadsheet's worksheets may spool to the worker's disk while they wait for the shared strings
 * stored after them (xlsx-reader.ts). A cell costs 6 bytes of XML a character of text in a typical table and
 * 15-19 in one of single characters (measured on exceljs's output), so a workbook within MAX_TEXT_CHARS fits in
 * 20 bytes a character unless it is mostly empty cells; a compressed one that inflates past it is TooLarge.
 */
export const MAX_SPOOLED_XML_BYTES = 20 * MAX_TEXT_CHARS;

export function tooMuchText(name: string): ExtractionError {
  return new ExtractionError('TooLarge', `${name} holds more than ${MAX_TEXT_CHARS} characters of text`);
}

/**
 * The characters an extractor has produced so far, counted as it appends them: a document whose text passes
 * MAX_TEXT_CHARS is refused at that moment, not after it has all been built and joined.
 */
export class TextBudget {
  private used = 0;
  constructor(private readonly name: string) {}

  /** Counts `text` and answers it; TooLarge once the document's text passes the cap. */
  take(text: string): string {
    this.used += text.length;
    if (this.used > MAX_TEXT_CHARS) throw tooMuchText(this.name);
    return text;
  }
}
