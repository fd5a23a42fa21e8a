// Every 4xx/5xx body is `{ type, errors }`. The set of `type` values is fixed and documented in docs/api-conventions.md.

export type ErrorType =
  | 'ValidationError'
  | 'UnauthorizedError'
  | 'ForbiddenError'
  | 'NotFoundError'
  /** 405: the path exists, the method does not (the answer has an `Allow` header). */
  | 'MethodNotAllowedError'
  | 'ConflictError'
  | 'PayloadTooLargeError'
  | 'UnsupportedMediaTypeError'
  /** 422: an Idempotency-Key sent again with another request body (docs/run-control.md#idempotency-keys). */
  | 'IdempotencyKeyReusedError'
  /** 429: an integration's handler got more deliveries than INTEGRATION_RATE_LIMIT_PER_MINUTE, or a caller is past RATE_LIMITS. */
  | 'TooManyRequestsError'
  | 'InternalError'
  | 'ServiceUnavailableError'
  /** 502: a function's handler raised, could not be loaded, or its run ended otherwise than SUCCEEDED. */
  | 'FunctionExecutionError';

export interface ErrorDetail {
  message: string;
  /** JSON pointer into the request (`/body/name`, `/query/page`, `/path/bucket_id`) when one part is at fault. */
  path?: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly errors: ErrorDetail[],
    /** Sent as `Retry-After`: the condition is transient (a 503 without it will not pass by retrying). */
    readonly retryAfterSeconds?: number,
  ) {
    super(errors.map((e) => e.message).join('; ') || type);
  }
}

export const validationError = (errors: ErrorDetail[]) => new HttpError(400, 'ValidationError', errors);
export const badRequest = (message: string, path?: string) => validationError([{ message, ...(path ? { path } : {}) }]);
export const unauthorized = (
  message = 'A valid API key (Authorization: Bearer <key>) or session (sign in: POST /api/sessions) is required',
) => new HttpError(401, 'UnauthorizedError', [{ message }]);
export const forbidden = (message: string) => new HttpError(403, 'ForbiddenError', [{ message }]);
export const notFound = (what: string) => new HttpError(404, 'NotFoundError', [{ message: `${what} not found` }]);
export const methodNotAllowed = (method: string, allowed: string[]) =>
  new HttpError(405, 'MethodNotAllowedError', [
    { message: `${method} is not allowed here; allowed: ${allowed.join(', ')}` },
  ]);
export const conflict = (message: string) => new HttpError(409, 'ConflictError', [{ message }]);
/**
 * 409: the body names records (by id) that the organization does not have. Like a foreign key violation it
 * conflicts with what exists; a 404 would say the request's own target (its path) is missing.
 */
export const missingReferences = (errors: ErrorDetail[]) => new HttpError(409, 'ConflictError', errors);
export const payloadTooLarge = (limitBytes: number) =>
  new HttpError(413, 'PayloadTooLargeError', [{ message: `Request body exceeds the limit of ${limitBytes} bytes` }]);
export const tooManyRequests = (message: string) => new HttpError(429, 'TooManyRequestsError', [{ message }]);
export const serviceUnavailable = (message: string) => new HttpError(503, 'ServiceUnavailableError', [{ message }]);
/** Seconds a client is told to wait (`Retry-After`) before retrying a request refused for a transient reason. */
export const RETRY_AFTER_SECONDS = 5;
/** 503 with `Retry-After`: a backing service is unreachable or out of resources (a full disk); retrying will do. */
export const temporarilyUnavailable = (message: string) =>
  new HttpError(503, 'ServiceUnavailableError', [{ message }], RETRY_AFTER_SECONDS);
export const functionExecutionError = (message: string) => new HttpError(502, 'FunctionExecutionError', [{ message }]);
