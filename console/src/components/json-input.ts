// A JSON text typed by the user, parsed or explained (forms that send a JSON body).
export function parseJson(text: string): { value?: unknown; error?: string } {
  if (!text.trim()) return { value: {} };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: `Not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
}
