// The text of a thread message's `input` or `output` as the console shows it. The api stores them as griptape's
// conversation memory driver writes them, the JSON of an artifact (`TextArtifact.to_json()`), or as plain text
// when a client posted that; the console reads them as any client of the public API would.

/** The value of an artifact's JSON (a text-like artifact's string, or a list artifact's texts, a line each), else the string. */
export function messageText(stored: string): string {
  if (!stored.startsWith('{')) return stored;
  try {
    return artifactText(JSON.parse(stored)) ?? stored;
  } catch {
    return stored;
  }
}

function artifactText(a: unknown): string | undefined {
  if (typeof a !== 'object' || a === null) return undefined;
  const { type, value } = a as { type?: unknown; value?: unknown };
  if (typeof type !== 'string' || !type.endsWith('Artifact')) return undefined;
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return undefined;
  const texts = value.map(artifactText);
  return texts.every((t) => t !== undefined) ? texts.join('\n') : undefined;
}
