// Where each DynamoDB command's units land, key value by key value, as the code sends them (the scale phase).
// Writes: the item's partition key and its units (DynamoDB's rule: the larger of the item before and after, per
// KB; twice that in a transaction; a refused conditional write 1), and each index's writes, derived from the
// item before and after (read beside the command on a client of the bench's own) and the index's projection in
// lib/table-schema.ts: an entry whose key changes is a delete and a put, an entry whose projected attributes
// change is one put, each billed by the entry's size. Reads: Get, BatchGet, TransactGet per key, Query per
// partition key value of the table or the index it names.
import { DynamoDBClient, GetItemCommand, type AttributeValue, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from '../../lib/table-schema';

type Item = Record<string, AttributeValue>;

/** Units that landed on one partition key value of the table (`target` 'table') or of an index. */
export interface KeyLoad {
  target: string;
  key: string;
  wcu: number;
  rcu: number;
}

/** DynamoDB's size of an item (attribute names and values, as its capacity rules count them). */
export function itemBytes(item: Item): number {
  const value = (v: AttributeValue): number => {
    const [type, x] = Object.entries(v)[0] as [string, unknown];
    if (type === 'S') return Buffer.byteLength(x as string);
    if (type === 'N') return Math.ceil(String(x).replace(/^-|\.|e.*$/gi, '').length / 2) + 1;
    if (type === 'B') return (x as Uint8Array).length;
    if (type === 'M') return 3 + itemBytes(x as Item);
    if (type === 'L') return 3 + (x as AttributeValue[]).reduce((n, e) => n + 1 + value(e), 0);
    if (type === 'SS' || type === 'NS') return (x as string[]).reduce((n, e) => n + Buffer.byteLength(e), 0);
    return 1; // BOOL, NULL
  };
  return Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k) + value(v), 0);
}

const PK = TABLE_SCHEMA.partitionKey.name;
const SK = TABLE_SCHEMA.sortKey.name;
/** Each index with the attributes its entries carry (undefined: every attribute). */
const INDEXES = TABLE_SCHEMA.globalSecondaryIndexes.map((i) => {
  const projection = (i as { projection?: string }).projection ?? 'ALL';
  const keyNames = [PK, SK, i.partitionKey.name, i.sortKey.name];
  return { name: i.indexName, pk: i.partitionKey.name, sk: i.sortKey.name, projected: projection === 'ALL' ? undefined : new Set(keyNames) };
});

const str = (v: AttributeValue | undefined) => (v && 'S' in v ? v.S : undefined);
const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const readUnits = (bytes: number, consistent: boolean) => Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);

/** An index's entry of an item (undefined: the item is not in the index). */
function entryOf(index: (typeof INDEXES)[number], item: Item | undefined): Item | undefined {
  if (!item || !str(item[index.pk]) || !str(item[index.sk])) return undefined;
  return index.projected ? Object.fromEntries(Object.entries(item).filter(([k]) => index.projected!.has(k))) : item;
}

const same = (a: Item, b: Item) => JSON.stringify(Object.entries(a).sort(([x], [y]) => x.localeCompare(y))) === JSON.stringify(Object.entries(b).sort(([x], [y]) => x.localeCompare(y)));

/** One item's write: the table's units on its partition key, each index's on its entries' keys. */
function itemWrite(before: Item | undefined, after: Item | undefined, key: Item, transactional: boolean): KeyLoad[] {
  const loads: KeyLoad[] = [];
  const bytes = Math.max(before ? itemBytes(before) : 0, after ? itemBytes(after) : 0);
  loads.push({ target: 'table', key: str(key[PK]) ?? '?', wcu: writeUnits(bytes) * (transactional ? 2 : 1), rcu: 0 });
  for (const index of INDEXES) {
    const old = entryOf(index, before);
    const now = entryOf(index, after);
    const put = (e: Item) => loads.push({ target: index.name, key: str(e[index.pk])!, wcu: writeUnits(itemBytes(e)), rcu: 0 });
    if (old && now && str(old[index.pk]) === str(now[index.pk]) && str(old[index.sk]) === str(now[index.sk])) {
      if (!same(old, now)) put(now);
    } else {
      if (old) put(old); // the delete of the old entry, billed by its size
      if (now) put(now);
    }
  }
  return loads;
}

type Input = Record<string, unknown> & { TableName?: string };
type Write = { table: string; key: Item; put?: Item; deletes?: boolean; transactional: boolean };

/** The items a write command touches (the key of each; a Put's new item as sent). */
function writesOf(command: string, input: Input): Write[] {
  const keyOf = (item: Item): Item => ({ [PK]: item[PK], [SK]: item[SK] });
  if (command === 'PutItemCommand') return [{ table: input.TableName!, key: keyOf(input.Item as Item), put: input.Item as Item, transactional: false }];
  if (command === 'UpdateItemCommand' || command === 'DeleteItemCommand') return [{ table: input.TableName!, key: input.Key as Item, deletes: command === 'DeleteItemCommand', transactional: false }];
  if (command === 'BatchWriteItemCommand') {
    const requests = input.RequestItems as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>;
    return Object.entries(requests).flatMap(([table, rs]) =>
      rs.map((r) => (r.PutRequest ? { table, key: keyOf(r.PutRequest.Item), put: r.PutRequest.Item, transactional: false } : { table, key: r.DeleteRequest!.Key, deletes: true, transactional: false })),
    );
  }
  if (command === 'TransactWriteItemsCommand') {
    type Op = { TableName: string; Item?: Item; Key?: Item };
    const items = input.TransactItems as { Put?: Op; Update?: Op; Delete?: Op; ConditionCheck?: Op }[];
    return items.flatMap((t): Write[] => {
      if (t.Put) return [{ table: t.Put.TableName, key: keyOf(t.Put.Item!), put: t.Put.Item, transactional: true }];
      const op = t.Update ?? t.Delete;
      return op ? [{ table: op.TableName, key: op.Key!, deletes: !!t.Delete, transactional: true }] : [];
    });
  }
  return [];
}

/** The partition key value a Query asks for, from its key condition (`#pk = :v` or `pk = :v`). */
function queriedKey(input: Input): string {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, AttributeValue>;
  const pkName = input.IndexName ? INDEXES.find((i) => i.name === input.IndexName)?.pk : PK;
  for (const part of ((input.KeyConditionExpression as string | undefined) ?? '').split(/\s+AND\s+/i)) {
    const m = /^\(?\s*([#\w]+)\s*=\s*(:\w+)\s*\)?$/.exec(part.trim());
    if (m && (names[m[1]] ?? m[1]) === pkName) return str(values[m[2]]) ?? '?';
  }
  return '?';
}

/**
 * Records the key loads of the commands that pass through `before`/`after` while `loads` is set. Writes to one
 * item are taken one at a time (from the read of the item before to the read after), so that concurrent writes
 * of one item each see their own before and after.
 */
export class KeyLoadRecorder {
  readonly loads: KeyLoad[] = [];
  private readonly client: DynamoDBClient;
  private readonly locks = new Map<string, Promise<void>>();

  constructor(options: DynamoDBClientConfig) {
    this.client = new DynamoDBClient(options);
  }

  private async read(table: string, key: Item): Promise<Item | undefined> {
    return (await this.client.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  }

  private async lock(ids: string[]): Promise<() => void> {
    const release: (() => void)[] = [];
    for (const id of [...new Set(ids)].sort()) {
      const prior = this.locks.get(id) ?? Promise.resolve();
      let done!: () => void;
      const mine = new Promise<void>((r) => (done = r));
      const chained = prior.then(() => mine);
      this.locks.set(id, chained);
      await prior;
      release.push(() => {
        done();
        if (this.locks.get(id) === chained) this.locks.delete(id);
      });
    }
    return () => release.forEach((r) => r());
  }

  /** Runs one command (`send`), recording where its units land. */
  async around<T>(command: string, input: Input, send: () => Promise<T>): Promise<T> {
    const writes = writesOf(command, input);
    if (!writes.length) {
      const output = await send();
      this.reads(command, input, output as Record<string, unknown>);
      return output;
    }
    const id = (w: Write) => `${w.table}|${str(w.key[PK])}|${str(w.key[SK])}`;
    const unlock = await this.lock(writes.map(id));
    try {
      const before = await Promise.all(writes.map((w) => this.read(w.table, w.key)));
      let output: T;
      try {
        output = await send();
      } catch (err) {
        // A refused conditional write (or a cancelled transaction): AWS bills 1 unit per item asked, writes none.
        if (/ConditionalCheckFailed|TransactionCanceled/.test((err as Error).name)) for (const w of writes) this.loads.push({ target: 'table', key: str(w.key[PK]) ?? '?', wcu: 1, rcu: 0 });
        throw err;
      }
      // After: a Put's item as sent, nothing after a delete, an update's item read back.
      const after = await Promise.all(writes.map(async (w) => (w.put ? w.put : w.deletes ? undefined : this.read(w.table, w.key))));
      writes.forEach((w, i) => this.loads.push(...itemWrite(before[i], after[i], w.key, w.transactional)));
      // A transaction's condition check: a transactional read billed with its writes (2 units).
      for (const t of (input.TransactItems ?? []) as { ConditionCheck?: { Key: Item } }[]) if (t.ConditionCheck) this.loads.push({ target: 'table', key: str(t.ConditionCheck.Key[PK]) ?? '?', wcu: 2, rcu: 0 });
      return output;
    } finally {
      unlock();
    }
  }

  private reads(command: string, input: Input, output: Record<string, unknown>): void {
    type Capacity = { CapacityUnits?: number };
    const consumed = ([] as Capacity[]).concat((output.ConsumedCapacity as Capacity | Capacity[] | undefined) ?? []);
    const units = consumed.reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
    const consistent = input.ConsistentRead === true;
    if (command === 'GetItemCommand') {
      const item = output.Item as Item | undefined;
      this.loads.push({ target: 'table', key: str((input.Key as Item)[PK]) ?? '?', wcu: 0, rcu: item ? Math.max(units, readUnits(itemBytes(item), consistent)) : consistent ? 1 : 0.5 });
    } else if (command === 'QueryCommand') {
      this.loads.push({ target: (input.IndexName as string | undefined) ?? 'table', key: queriedKey(input), wcu: 0, rcu: Math.max(units, consistent ? 1 : 0.5) });
    } else if (command === 'BatchGetItemCommand') {
      const asked = input.RequestItems as Record<string, { Keys: Item[]; ConsistentRead?: boolean }>;
      const found = (output.Responses ?? {}) as Record<string, Item[]>;
      for (const [table, { Keys, ConsistentRead }] of Object.entries(asked)) {
        for (const key of Keys) {
          const item = found[table]?.find((i) => str(i[PK]) === str(key[PK]) && str(i[SK]) === str(key[SK]));
          this.loads.push({ target: 'table', key: str(key[PK]) ?? '?', wcu: 0, rcu: readUnits(item ? itemBytes(item) : 0, ConsistentRead === true) });
        }
      }
    } else if (command === 'TransactGetItemsCommand') {
      const items = input.TransactItems as { Get: { Key: Item } }[];
      const responses = (output.Responses ?? []) as { Item?: Item }[];
      items.forEach((t, i) => {
        const item = responses[i]?.Item;
        this.loads.push({ target: 'table', key: str(t.Get.Key[PK]) ?? '?', wcu: 0, rcu: 2 * readUnits(item ? itemBytes(item) : 0, true) });
      });
    } else if (command === 'ScanCommand') {
      this.loads.push({ target: (input.IndexName as string | undefined) ?? 'table', key: '<scan>', wcu: 0, rcu: units });
    }
  }
}
