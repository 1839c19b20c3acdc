// Where each stream consumer has got to, kept in the data folder so a restart resumes there (as an event
// source mapping keeps its position on AWS): per consumer and per shard, the last sequence number it finished.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** A shard's sequence numbers are decimal strings of varying length: compared as numbers. */
export const seqAfter = (a: string, b: string): boolean => BigInt(a) > BigInt(b);

interface Saved {
  streamArn: string;
  /** consumer id → shard id → the last sequence number that consumer finished (handled or dead-lettered). */
  consumers: Record<string, Record<string, string>>;
}

/** Where a shard is read from at start-up. */
export type ShardStart = { type: 'TRIM_HORIZON' } | { type: 'AFTER_SEQUENCE_NUMBER'; seq: string };

export class StreamCheckpoints {
  private saved: Saved;
  /** False on a very first start (no file yet): nothing was read before, and what is in the stream is skipped. */
  readonly resumed: boolean;

  constructor(
    private readonly file: string,
    streamArn: string,
    private readonly consumerIds: string[],
  ) {
    const old = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Saved) : undefined;
    // Another stream (the table made again, or kept in memory): its positions mean nothing here, but the stack
    // has run on this folder before, so the new stream is read from its start.
    this.resumed = old !== undefined;
    this.saved = old?.streamArn === streamArn ? old : { streamArn, consumers: {} };
    for (const id of consumerIds) this.saved.consumers[id] ??= {};
    // A very first start is written once its positions are taken (saveStart): a crash before that is a first
    // start again, not a restart that would read the whole stream.
    if (this.resumed) this.write();
  }

  /** After start-up took its positions: a crash from now on finds the stack has started on this stream. */
  saveStart(): void {
    this.write();
  }

  /** The consumer's last finished sequence number in the shard, if any. */
  of(consumer: string, shard: string): string | undefined {
    return this.saved.consumers[consumer]?.[shard];
  }

  /**
   * Where to read a shard from on a restart: right after the slowest consumer's checkpoint; from its start when
   * a consumer has none there (a shard made while the stack was down, or one it had not reached yet).
   */
  startOf(shard: string): ShardStart {
    let lowest: string | undefined;
    for (const id of this.consumerIds) {
      const seq = this.of(id, shard);
      if (seq === undefined) return { type: 'TRIM_HORIZON' };
      if (lowest === undefined || seqAfter(lowest, seq)) lowest = seq;
    }
    return lowest === undefined ? { type: 'TRIM_HORIZON' } : { type: 'AFTER_SEQUENCE_NUMBER', seq: lowest };
  }

  /** A very first start: every consumer starts after `seq`, the shard's last record so far. */
  seed(shard: string, seq: string): void {
    for (const id of this.consumerIds) this.advance(id, new Map([[shard, seq]]));
  }

  /** Records a consumer's finished batch: `done` maps each shard to the last sequence number finished in it. */
  advance(consumer: string, done: Map<string, string>): void {
    const mine = this.saved.consumers[consumer];
    let changed = false;
    for (const [shard, seq] of done) {
      if (mine[shard] !== undefined && !seqAfter(seq, mine[shard])) continue;
      mine[shard] = seq;
      changed = true;
    }
    if (changed) this.write();
  }

  /** Forgets shards the stream no longer has (trimmed after 24 h). */
  prune(liveShards: Set<string>): void {
    let changed = false;
    for (const shards of Object.values(this.saved.consumers)) {
      for (const id of Object.keys(shards)) {
        if (liveShards.has(id)) continue;
        delete shards[id];
        changed = true;
      }
    }
    if (changed) this.write();
  }

  /** Atomically: a crash mid-write leaves the previous file, never half of one. */
  private write(): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.saved) + '\n');
    renameSync(tmp, this.file);
  }

  /** A throwaway stack (its table in memory) starts with no positions. */
  static clear(file: string): void {
    rmSync(file, { force: true });
  }
}
