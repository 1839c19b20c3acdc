// An item's `ttl` (epoch seconds) as every read treats it: DynamoDB deletes an item past it within days, and
// until then a read takes it as gone.
export const isPastTtl = (item: { ttl?: unknown }, nowMs = Date.now()): boolean => typeof item.ttl === 'number' && item.ttl * 1000 <= nowMs;
