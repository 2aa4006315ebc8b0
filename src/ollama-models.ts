/** Ollama reads a name without a tag as ":latest" ("llama3.2" is "llama3.2:latest"): generation and embeddings compare names so. */
export function normalizeModelName(name: string): string {
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  return lastSegment.includes(':') ? name : `${name}:latest`;
}
