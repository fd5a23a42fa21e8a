// Why an asset's text could not be read; the job records `type` and the message as an entry of its `errors`.
export class ExtractionError extends Error {
  constructor(
    readonly type: 'UnsupportedFormat' | 'InvalidContent' | 'TooLarge',
    message: string,
  ) {
    super(message);
  }
}
