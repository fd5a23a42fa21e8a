// Thread messages as griptape's conversation memory driver (GriptapeCloudConversationMemoryDriver) writes and
// reads them: each `input` and `output` is the JSON of an artifact (`TextArtifact.to_json()`), which its `load()`
// reads back with `BaseArtifact.from_json`, so plain text there fails it with a JSONDecodeError. An assistant run
// writes its exchange the same way, and reads the text of whatever a thread holds when it builds a prompt. The
// console reads a thread's messages the same way (console/src/api/message-text.ts: a client of the public API).

/** `text` as griptape's `TextArtifact(text).to_json()` writes it (an id, its name the id, no reference or meta). */
export function textArtifactJson(text: string): string {
  const id = globalThis.crypto.randomUUID().replaceAll('-', '');
  return JSON.stringify({ type: 'TextArtifact', id, reference: null, meta: {}, name: id, value: text });
}

/**
 * The text of a stored message's `input` or `output`: the value of an artifact's JSON (a text-like artifact's
 * string, or a list artifact's texts, one a line), else the string as it is (messages posted as plain text).
 */
export function messageText(stored: string): string {
  if (!stored.startsWith('{')) return stored;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return stored;
  }
  return artifactText(parsed) ?? stored;
}

function artifactText(a: unknown): string | undefined {
  if (typeof a !== 'object' || a === null) return undefined;
  const { type, value } = a as { type?: unknown; value?: unknown };
  if (typeof type !== 'string' || !type.endsWith('Artifact')) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const texts = value.map(artifactText);
    return texts.every((t) => t !== undefined) ? texts.join('\n') : undefined;
  }
  return undefined;
}
