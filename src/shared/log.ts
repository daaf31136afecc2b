// Minimal structured logging used by every service; unexpected errors go to the log, never to the client.

export function logError(message: string, error: unknown): void {
  const detail = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : error;
  console.error(JSON.stringify({ level: "error", "@message": message, error: detail }));
}

export function logInfo(message: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ level: "info", "@message": message, ...fields }));
}
