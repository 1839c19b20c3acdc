// One JSON log line per event, for every function. Callers pass ids and reasons, never headers, bodies,
// tokens or secrets.

export function log(level: 'info' | 'error', message: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, message, ...fields });
  if (level === 'error') console.error(line);
  else console.log(line);
}

/** An error as loggable fields (name, message, stack). */
export const errorFields = (err: unknown): Record<string, unknown> =>
  err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : { message: String(err) };
