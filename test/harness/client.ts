// HTTP client for tests. Every JSON response is validated against the api's own OpenAPI document
// (fetched from /api/openapi.json): the declared schema for that operation and status, or the error
// schema for 4xx/5xx. A response the document does not describe fails the test.
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { getStack } from './stack';

export interface Reply<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

interface Operation {
  method: string;
  regex: RegExp;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

let operations: Operation[] | undefined;
let ajv: Ajv;
const validators = new Map<unknown, ValidateFunction>();

async function loadDocument(): Promise<Operation[]> {
  if (operations) return operations;
  const res = await fetch(`${getStack().baseUrl}/api/openapi.json`);
  const doc = (await res.json()) as any;
  ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: doc.components });
  operations = [];
  for (const [p, methods] of Object.entries<any>(doc.paths)) {
    // {name} of a greedy parameter may contain slashes; others may not.
    const pattern = p.replace(/\{(\w+)\}/g, (_m: string, n: string) =>
      /name$/.test(n) && p.endsWith(`{${n}}`) ? '(.+)' : '([^/]+)',
    );
    for (const [method, op] of Object.entries<any>(methods)) {
      operations.push({ method: method.toUpperCase(), regex: new RegExp(`^${pattern}$`), responses: op.responses });
    }
  }
  return operations;
}

function validatorFor(schema: unknown): ValidateFunction {
  let v = validators.get(schema);
  if (!v) {
    const rewritten = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/'));
    v = ajv.compile(rewritten);
    validators.set(schema, v);
  }
  return v;
}

async function checkAgainstDocument(method: string, path: string, reply: Reply) {
  const ops = await loadDocument();
  const pathname = new URL(path, 'http://x').pathname;
  const op = ops.find((o) => o.method === method && o.regex.test(pathname));
  const contentType = reply.headers.get('content-type') ?? '';
  if (!op) {
    if (reply.status >= 400) return; // unknown routes answer the error shape, checked by tests
    throw new Error(`${method} ${pathname} answered ${reply.status} but is not in the OpenAPI document`);
  }
  const declared = op.responses[String(reply.status)] ?? (reply.status >= 400 ? op.responses.default : undefined);
  if (!declared)
    throw new Error(`${method} ${pathname}: status ${reply.status} is not declared in the OpenAPI document`);
  const schema = declared.content?.['application/json']?.schema;
  if (!schema || !contentType.includes('application/json')) return;
  const validate = validatorFor(schema);
  if (!validate(reply.body)) {
    throw new Error(
      `${method} ${pathname} ${reply.status}: response does not match the OpenAPI document: ` +
        `${ajv.errorsText(validate.errors)}\n${reply.text.slice(0, 2000)}`,
    );
  }
}

export interface RequestOptions {
  key?: string;
  headers?: Record<string, string>;
  /** Raw body (sent as is); otherwise `body` is JSON-encoded. */
  raw?: RequestInit['body'];
}

export async function request<T = any>(
  method: string,
  path: string,
  body?: unknown,
  opts: RequestOptions = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let payload: RequestInit['body'] | undefined = opts.raw;
  if (payload === undefined && body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] ??= 'application/json';
  }
  const url = path.startsWith('http') ? path : `${getStack().baseUrl}${path}`;
  const res = await fetch(url, { method, headers, body: payload });
  const text = await res.text();
  let parsed: any = text;
  if ((res.headers.get('content-type') ?? '').includes('application/json') && text) parsed = JSON.parse(text);
  const reply: Reply<T> = { status: res.status, body: parsed, text, headers: res.headers };
  if (new URL(url).pathname.startsWith('/api/')) await checkAgainstDocument(method, url, reply);
  return reply;
}

/** Shorthands bound to one API key (and optionally another api process's base URL). */
export function as(key: string | undefined, baseUrl?: string) {
  const at = (p: string) => (baseUrl && !p.startsWith('http') ? `${baseUrl}${p}` : p);
  return {
    get: <T = any>(p: string, o: RequestOptions = {}) => request<T>('GET', at(p), undefined, { key, ...o }),
    post: <T = any>(p: string, b?: unknown, o: RequestOptions = {}) => request<T>('POST', at(p), b, { key, ...o }),
    put: <T = any>(p: string, b?: unknown, o: RequestOptions = {}) => request<T>('PUT', at(p), b, { key, ...o }),
    patch: <T = any>(p: string, b?: unknown, o: RequestOptions = {}) => request<T>('PATCH', at(p), b, { key, ...o }),
    delete: <T = any>(p: string, o: RequestOptions = {}) => request<T>('DELETE', at(p), undefined, { key, ...o }),
  };
}
