// DynamoDB Local's stream records as Lambda's DynamoDBStreamEvent carries them, and Lambda's event-filter matching.
import type { _Record as StreamRecord } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';

/** Lambda event-filter semantics for the patterns we use: every key must match; leaves are lists of allowed values. */
export function matchesFilter(pattern: unknown, value: unknown): boolean {
  if (Array.isArray(pattern)) return pattern.some((p) => p === value);
  if (typeof pattern === 'object' && pattern !== null) {
    if (typeof value !== 'object' || value === null) return false;
    return Object.entries(pattern).every(([k, p]) => matchesFilter(p, (value as Record<string, unknown>)[k]));
  }
  return pattern === value;
}

/**
 * DynamoDB Local's stream drops the type of an empty map (`{}` where DynamoDB sends `{"M":{}}`); put it back
 * so handlers see what Lambda would give them.
 */
function repairImage(image: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!image) return image;
  const fix = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const av = v as Record<string, unknown>;
    if (Object.keys(av).length === 0) return { M: {} };
    if (av.M) return { M: repairImage(av.M as Record<string, unknown>) };
    if (Array.isArray(av.L)) return { L: av.L.map(fix) };
    return av;
  };
  return Object.fromEntries(Object.entries(image).map(([k, v]) => [k, fix(v)]));
}

export function toLambdaRecord(r: StreamRecord, streamArn: string, region: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  // The SDK gives the creation time as a Date; Lambda's event carries epoch seconds.
  const created = d.ApproximateCreationDateTime?.getTime();
  return {
    eventID: r.eventID,
    eventName: r.eventName,
    eventVersion: r.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    eventSourceARN: streamArn,
    dynamodb: {
      ApproximateCreationDateTime: created ? Math.floor(created / 1000) : undefined,
      Keys: d.Keys as never,
      NewImage: repairImage(d.NewImage) as never,
      OldImage: repairImage(d.OldImage) as never,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType as never,
    },
  };
}
