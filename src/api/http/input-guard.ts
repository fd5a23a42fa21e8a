// The one check of request input that runs before anything walks it recursively (ajv, JSON.stringify,
// the services): nesting depth, and the text rule of the schemas (src/api/schemas/registry.ts). A body
// nested 100,000 deep is a few hundred KB, under the size limit, and would overflow the stack of any
// recursive walk; a NUL character or an unpaired surrogate would make PostgreSQL refuse the row (a 500).
import { MAX_JSON_DEPTH } from '../schemas/registry';
import { validationError } from '../../errors';

/** A NUL character, or a UTF-16 surrogate that is not half of a pair. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const problem = (text: string) => (text.includes('\u0000') ? 'a NUL character' : 'an unpaired UTF-16 surrogate');

/** JSON pointer token (RFC 6901). */
const token = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | undefined;
  key: string | number | undefined;
}

const pointer = (frame: Frame, root: string): string => {
  const keys: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) keys.unshift(f.key!);
  return root + keys.map((k) => `/${token(k)}`).join('');
};

/**
 * Refuses (400 ValidationError naming the place) a value nested deeper than MAX_JSON_DEPTH arrays and
 * objects, or holding a NUL character or an unpaired surrogate in a string or a member name. Iterative:
 * safe on any input JSON.parse accepted. `root` is the pointer of `value` (`/body`, `/query`, `/path`).
 */
export function guardInput(value: unknown, root: string): void {
  const stack: Frame[] = [{ value, depth: 0, parent: undefined, key: undefined }];
  while (stack.length) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) throw refuse(pointer(frame, root), `must not contain ${problem(v)}`);
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const depth = frame.depth + 1;
    if (depth > MAX_JSON_DEPTH)
      throw refuse(pointer(frame, root), `is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth, parent: frame, key: i });
      continue;
    }
    for (const [key, item] of Object.entries(v)) {
      // The key itself cannot be part of the pointer: it is what cannot be shown.
      if (UNSTORABLE.test(key)) throw refuse(pointer(frame, root), `has a member name containing ${problem(key)}`);
      stack.push({ value: item, depth, parent: frame, key });
    }
  }
}

const refuse = (path: string, what: string) => validationError([{ message: `${path} ${what}`, path }]);
